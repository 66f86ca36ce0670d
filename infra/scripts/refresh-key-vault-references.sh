#!/usr/bin/env sh
# azd postprovision hook: has App Service resolve the apps' Key Vault references now, and waits until they are.
# App Service resolves a reference when an app's settings change and keeps the result, a failure included, for up
# to 24 hours. On a first provision the apps get their settings before their roles apply and before this hook has
# written the secrets, so the references fail, and each app would read the literal @Microsoft.KeyVault(...) text
# (which both refuse at start-up) until the next change or refetch. The documented remedy is a POST to the app's
# config/configreferences/appsettings/refresh; a role granted moments ago can take minutes to apply, so it asks
# again until every reference named below reads Resolved. Safe to run again.
set -eu

: "${AZURE_FUNCTION_APP_ID:?is not set: run this through azd (azd provision), or load the azd environment first}"

if ! command -v az >/dev/null 2>&1; then
  echo "refresh-key-vault-references: the Azure CLI (az) is required, signed in as the deploying account" >&2
  exit 1
fi

api="api-version=2022-03-01"

# The status of one setting's reference (Resolved, AccessToKeyVaultDenied, SecretNotFound, ...), empty when
# App Service lists none for it yet.
status_of() {
  az rest --method get --url "$1/config/configreferences/appsettings?$api" \
    --query "value[?ends_with(id, '/$2')].properties.status | [0]" --output tsv </dev/null 2>/dev/null || true
}

# The sites to refresh, and each Key Vault reference to wait for as `<site id>|<setting>` (ids hold no `|`).
sites=$AZURE_FUNCTION_APP_ID
references="$AZURE_FUNCTION_APP_ID|DATA_PROTECTION_KEYS"
if [ -n "${AZURE_PARTNER_ID:-}" ]; then
  sites="$sites $AZURE_PARTNER_ID"
  references="$references $AZURE_FUNCTION_APP_ID|PARTNER_ACCESS_KEY $AZURE_PARTNER_ID|PARTNER_ACCESS_KEY"
fi

attempt=1
while :; do
  for site in $sites; do
    # --url without a host is taken relative to the current cloud's Resource Manager endpoint.
    az rest --method post --url "$site/config/configreferences/appsettings/refresh?$api" --output none </dev/null ||
      echo "refresh-key-vault-references: the refresh of ${site##*/} failed; asking again" >&2
  done
  pending=""
  for reference in $references; do
    site=${reference%|*}
    setting=${reference##*|}
    status=$(status_of "$site" "$setting")
    if [ "$status" != "Resolved" ]; then pending="$pending ${site##*/}/$setting (${status:-not listed yet})"; fi
  done
  if [ -z "$pending" ]; then
    echo "refresh-key-vault-references: every Key Vault reference resolved"
    exit 0
  fi
  # 41 tries 15 seconds apart: 10 minutes of waits, about as long as a Key Vault role can take to apply.
  if [ "$attempt" -ge "${REFERENCE_ATTEMPTS:-41}" ]; then
    echo "refresh-key-vault-references: still unresolved after $attempt tries:$pending." \
      "Once the roles apply, run: azd hooks run postprovision" >&2
    exit 1
  fi
  attempt=$((attempt + 1))
  sleep "${REFERENCE_RETRY_SECONDS:-15}"
done
