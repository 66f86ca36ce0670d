#!/usr/bin/env sh
# azd postprovision hook: puts the data-protection key ring (DATA_PROTECTION_KEYS: the keys that seal the
# state store's personal and payment fields) into the deployment's Key Vault, once. The Bicep creates the secret
# with a placeholder (content type `placeholder`, infra/modules/key-vault-secrets.bicep), so that the app's
# identity can be granted that one secret before the app exists; this writes the ring over the placeholder. The
# app reads it through the Key Vault reference the Bicep sets; the value is never printed, passed on a command
# line or kept here. Safe to run again: a ring already written is kept, since replacing it would leave the sealed
# fields unreadable. To rotate, put a new key in front of the old ones in the secret (docs/data-protection.md).
set -eu

: "${AZURE_KEY_VAULT_NAME:?is not set: run this through azd (azd provision), or load the azd environment first}"
: "${AZURE_DATA_PROTECTION_SECRET_NAME:?is not set}"

for tool in az node; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "create-data-protection-keys: $tool is required (az signed in as the deploying account: az login)" >&2
    exit 1
  fi
done

vault=$AZURE_KEY_VAULT_NAME
secret=$AZURE_DATA_PROTECTION_SECRET_NAME

# The deployer's role on the vault is new after a first provision, and a Key Vault role assignment can take up to
# about 10 minutes to apply: ask every 10 seconds for 10 minutes (61 tries, 60 waits).
attempt=1
while :; do
  # `present:<content type>` when the secret exists (no value is listed), nothing when it does not.
  if found=$(az keyvault secret list --vault-name "$vault" \
    --query "[?name=='$secret'].join('', ['present:', contentType || ''])" --output tsv 2>/dev/null); then
    break
  fi
  if [ "$attempt" -ge "${KEY_VAULT_ATTEMPTS:-61}" ]; then
    echo "create-data-protection-keys: cannot list the secrets of $vault after $attempt tries (is the Key Vault Secrets Officer" \
      "role applied yet? It can take about 10 minutes); once it is: azd hooks run postprovision" >&2
    exit 1
  fi
  attempt=$((attempt + 1))
  sleep "${KEY_VAULT_RETRY_SECONDS:-10}"
done

case "$found" in
  present:placeholder) ;;
  present:*)
    echo "create-data-protection-keys: $vault already holds $secret; kept"
    exit 0
    ;;
esac

umask 077
file=$(mktemp)
trap 'rm -f "$file"' EXIT
node -e '
  const { randomBytes } = require("node:crypto");
  const id = "k" + new Date().toISOString().slice(0, 10).replaceAll("-", "");
  process.stdout.write(id + ":" + randomBytes(32).toString("base64"));' > "$file"
az keyvault secret set --vault-name "$vault" --name "$secret" --file "$file" --encoding utf-8 --output none
echo "create-data-protection-keys: wrote a new key ring to $secret in $vault"
