#!/usr/bin/env sh
# azd postprovision hook: has App Service fetch the apps' Key Vault references again, now that the hook before it
# wrote the secrets' values, and checks that each resolves. It warns and lets `azd up` go on; it never stops it.
# App Service resolves a reference when an app's settings change and keeps the result for up to 24 hours. The
# Bicep grants each app's identity its secrets before it makes the site (infra/modules/key-vault-secrets.bicep), so
# the references resolve when the sites start, but to the placeholders the secrets hold until this hook's first
# steps replace them. The documented remedy is a POST to the app's config/configreferences/appsettings/refresh,
# which has App Service fetch the latest version. A grant made moments ago can still be applying, so it asks a
# few times, briefly; a reference still unresolved after that is named, with how to fetch it again later (the app
# refuses to start on it meanwhile, naming the setting). Safe to run again.
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
  # 3 tries 10 seconds apart: long enough for a grant that is about to apply, short enough not to hold `azd up`.
  if [ "$attempt" -ge "${REFERENCE_ATTEMPTS:-3}" ]; then
    echo "refresh-key-vault-references: WARNING: still unresolved after $attempt tries:$pending." \
      "azd goes on; each app refuses to start on such a setting, naming it, until App Service fetches it again." \
      "Once the grant applies (it can take some minutes): azd hooks run postprovision" >&2
    exit 0
  fi
  attempt=$((attempt + 1))
  sleep "${REFERENCE_RETRY_SECONDS:-10}"
done
