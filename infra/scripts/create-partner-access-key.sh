#!/usr/bin/env sh
# azd postprovision hook: the simulated partner's access key (PARTNER_ACCESS_KEY), which every call to the partner
# but GET /health must carry. The Bicep creates the secret with a placeholder (content type `placeholder`) and
# grants both apps' identities that one secret (infra/modules/key-vault-secrets.bicep); this writes a random key
# over the placeholder, once. The value is never printed, passed on a command line or kept here. Safe to run
# again: a key already written is kept.
set -eu

if [ -z "${AZURE_PARTNER_NAME:-}" ]; then
  echo "create-partner-access-key: this deployment calls a partner of your own (PARTNER_URL); nothing to do"
  exit 0
fi
: "${AZURE_KEY_VAULT_NAME:?is not set: run this through azd (azd provision), or load the azd environment first}"
: "${AZURE_PARTNER_ACCESS_SECRET_NAME:?is not set}"

for tool in az node; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "create-partner-access-key: $tool is required (az signed in as the deploying account: az login)" >&2
    exit 1
  fi
done

vault=$AZURE_KEY_VAULT_NAME
secret=$AZURE_PARTNER_ACCESS_SECRET_NAME

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
    echo "create-partner-access-key: cannot list the secrets of $vault after $attempt tries (is the Key Vault Secrets Officer" \
      "role applied yet? It can take about 10 minutes); once it is: azd hooks run postprovision" >&2
    exit 1
  fi
  attempt=$((attempt + 1))
  sleep "${KEY_VAULT_RETRY_SECONDS:-10}"
done

case "$found" in
  present:placeholder) ;;
  present:*)
    echo "create-partner-access-key: $vault already holds $secret; kept"
    exit 0
    ;;
esac
umask 077
file=$(mktemp)
trap 'rm -f "$file"' EXIT
node -e 'process.stdout.write(require("node:crypto").randomBytes(32).toString("base64url"))' > "$file"
az keyvault secret set --vault-name "$vault" --name "$secret" --file "$file" --encoding utf-8 --output none
echo "create-partner-access-key: wrote a new access key to $secret in $vault"
