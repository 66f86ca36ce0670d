#!/usr/bin/env sh
# azd preprovision hook: whether the Bicep creates this environment's Key Vault or recovers it. `azd down` deletes
# the vault softly: Key Vault keeps it, and its name, for 90 days, and with purge protection (PROTECT_DATA) nobody
# can purge it sooner, not even `azd down --purge`. The vault's name derives from the subscription, the
# environment's name and the region, so provisioning the same environment again asks for that very name, which
# Azure refuses while the deleted vault holds it. So: when the subscription holds a deleted vault tagged with this
# environment in this region, the Bicep recovers it (its secrets with it: the key ring and the partner's key come
# back, and the postprovision hook keeps them); otherwise it creates or updates the vault as usual. Decided afresh
# on every provision, and written to the azd environment as KEY_VAULT_CREATE_MODE (main.parameters.json).
set -eu

: "${AZURE_ENV_NAME:?is not set: run this through azd (azd provision), or load the azd environment first}"
: "${AZURE_LOCATION:?is not set}"
: "${AZURE_SUBSCRIPTION_ID:?is not set}"

for tool in az azd; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "key-vault-create-mode: $tool is required (az signed in as the deploying account: az login)" >&2
    exit 1
  fi
done

if ! deleted=$(az keyvault list-deleted --subscription "$AZURE_SUBSCRIPTION_ID" --resource-type vault \
  --query "[?properties.tags.\"azd-env-name\"=='$AZURE_ENV_NAME' && properties.location=='$AZURE_LOCATION'].name" \
  --output tsv); then
  echo "key-vault-create-mode: cannot list the deleted Key Vaults of subscription $AZURE_SUBSCRIPTION_ID" \
    "(is az signed in to it? az login, then azd provision again)" >&2
  exit 1
fi

if [ -n "$deleted" ]; then
  azd env set KEY_VAULT_CREATE_MODE recover
  echo "key-vault-create-mode: $(echo "$deleted" | tr '\n' ' ')was deleted with this environment and is still held" \
    "under its name; provisioning recovers it, with its secrets"
else
  azd env set KEY_VAULT_CREATE_MODE default
fi
