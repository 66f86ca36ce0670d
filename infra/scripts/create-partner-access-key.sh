#!/usr/bin/env sh
# azd postprovision hook: the simulated partner's access key (PARTNER_ACCESS_KEY), which every call to the partner
# but GET /health must carry. Writes a random key into the deployment's Key Vault once, and gives the partner's
# identity Key Vault Secrets User on that one secret. ARM cannot grant that: a role is scoped to a secret only once
# the secret exists, and the first provision runs before this hook writes it. The Function App reads the key with
# its role on the whole vault (infra/modules/access.bicep). The value is never printed, passed on a command line or
# kept here. Safe to run again: an existing key and an existing grant are kept.
set -eu

if [ -z "${AZURE_PARTNER_NAME:-}" ]; then
  echo "create-partner-access-key: this deployment calls a partner of your own (PARTNER_URL); nothing to do"
  exit 0
fi
: "${AZURE_KEY_VAULT_NAME:?is not set: run this through azd (azd provision), or load the azd environment first}"
: "${AZURE_KEY_VAULT_ID:?is not set}"
: "${AZURE_PARTNER_ACCESS_SECRET_NAME:?is not set}"
: "${AZURE_PARTNER_PRINCIPAL_ID:?is not set}"

for tool in az node; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "create-partner-access-key: $tool is required (az signed in as the deploying account: az login)" >&2
    exit 1
  fi
done

vault=$AZURE_KEY_VAULT_NAME
secret=$AZURE_PARTNER_ACCESS_SECRET_NAME
# Key Vault Secrets User: reads a secret's value, nothing else.
role=4633458b-17de-408a-b874-0445c86b69e6
scope="$AZURE_KEY_VAULT_ID/secrets/$secret"

# The deployer's role on the vault is new after a first provision, and a Key Vault role assignment can take up to
# about 10 minutes to apply: ask every 10 seconds for 10 minutes (61 tries, 60 waits).
attempt=1
while :; do
  if found=$(az keyvault secret list --vault-name "$vault" --query "[?name=='$secret'].name" --output tsv 2>/dev/null); then
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

if [ "$found" = "$secret" ]; then
  echo "create-partner-access-key: $vault already holds $secret; kept"
else
  umask 077
  file=$(mktemp)
  trap 'rm -f "$file"' EXIT
  node -e 'process.stdout.write(require("node:crypto").randomBytes(32).toString("base64url"))' > "$file"
  az keyvault secret set --vault-name "$vault" --name "$secret" --file "$file" --encoding utf-8 --output none
  rm -f "$file"
  echo "create-partner-access-key: wrote a new access key to $secret in $vault"
fi

# By object id and principal type, so that neither listing nor granting needs a directory (Graph) lookup.
held=$(az role assignment list --scope "$scope" --role "$role" --fill-principal-name false \
  --query "[?principalId=='$AZURE_PARTNER_PRINCIPAL_ID'] | length(@)" --output tsv)
if [ "${held:-0}" -gt 0 ]; then
  echo "create-partner-access-key: $AZURE_PARTNER_NAME may already read $secret; kept"
else
  az role assignment create --assignee-object-id "$AZURE_PARTNER_PRINCIPAL_ID" \
    --assignee-principal-type ServicePrincipal --role "$role" --scope "$scope" --output none
  echo "create-partner-access-key: $AZURE_PARTNER_NAME may read $secret (Key Vault Secrets User on that secret only)"
fi
