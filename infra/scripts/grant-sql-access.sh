#!/usr/bin/env sh
# azd postprovision hook: gives the Function App's managed identity its user in the orders database.
# ARM cannot create a contained database user, so this runs app-database-user.sql as the server's Entra
# administrator (the deploying principal: azd's, a person or a pipeline's service principal) with go-sqlcmd,
# signed in through `az login`. azd and az sign in separately, so the hook first checks that az is signed in
# as that administrator. Safe to run again (`azd hooks run postprovision`): it keeps an existing user.
#
# The server admits only Azure-internal traffic, so the hook opens a firewall rule for this machine's
# public address (SQL_CLIENT_IP, or looked up) and removes it when done.
#
# Every az call names azd's subscription (AZURE_SUBSCRIPTION_ID): az's default subscription is its own choice
# (az account set), not necessarily the one azd deployed to.
set -eu

: "${AZURE_SUBSCRIPTION_ID:?is not set: run this through azd (azd provision), or load the azd environment first}"
: "${AZURE_RESOURCE_GROUP:?is not set}"
: "${AZURE_SQL_SERVER_NAME:?is not set}"
: "${AZURE_SQL_SERVER_FQDN:?is not set}"
: "${AZURE_SQL_DATABASE:?is not set}"
: "${AZURE_FUNCTION_APP_NAME:?is not set}"
: "${AZURE_FUNCTION_APP_CLIENT_ID:?is not set}"

script_dir=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)

if ! command -v node >/dev/null 2>&1; then
  echo "grant-sql-access: Node.js (node) is required" >&2
  exit 1
fi
if ! command -v az >/dev/null 2>&1; then
  echo "grant-sql-access: the Azure CLI (az) is required, signed in as the deploying account (az login)" >&2
  exit 1
fi
# The ODBC sqlcmd has no --authentication-method; go-sqlcmd has.
if ! sqlcmd --help 2>&1 | grep -q -- '--authentication-method'; then
  echo "grant-sql-access: go-sqlcmd is required: https://learn.microsoft.com/sql/tools/sqlcmd/sqlcmd-download-install" >&2
  exit 1
fi

subscription=$AZURE_SUBSCRIPTION_ID
if ! az account show --subscription "$subscription" --query id --output tsv >/dev/null 2>&1; then
  echo "grant-sql-access: az cannot use subscription $subscription, the one azd deployed to" \
    "(AZURE_SUBSCRIPTION_ID). Sign az in to its tenant (az login --tenant ...), then: azd hooks run postprovision" >&2
  exit 1
fi

# The object id (oid claim) of whoever az is signed in as, read from an access token for the subscription's
# tenant: no directory lookup.
signed_in=$(az account get-access-token --subscription "$subscription" --query accessToken --output tsv | node -e '
  let token = ""; process.stdin.on("data", (c) => (token += c)).on("end", () => {
    const payload = token.trim().split(".")[1] ?? "";
    process.stdout.write(String(JSON.parse(Buffer.from(payload, "base64url").toString()).oid ?? ""));
  });')
admin=$(az sql server ad-admin list --subscription "$subscription" --resource-group "$AZURE_RESOURCE_GROUP" \
  --server "$AZURE_SQL_SERVER_NAME" --query "[0].sid" --output tsv)
if [ -z "$signed_in" ] || [ "$(printf '%s' "$signed_in" | tr 'A-F' 'a-f')" != "$(printf '%s' "$admin" | tr 'A-F' 'a-f')" ]; then
  echo "grant-sql-access: az is signed in as object id '${signed_in:-unknown}', but the SQL administrator of" \
    "$AZURE_SQL_SERVER_NAME is '$admin', the principal azd deployed with (AZURE_PRINCIPAL_ID). Sign az in as" \
    "that principal (az login, or az login --service-principal in a pipeline), then: azd hooks run postprovision" >&2
  exit 1
fi

client_ip=${SQL_CLIENT_IP:-$(curl -fsS https://api.ipify.org)}
rule="azd-postprovision-$(printf '%s' "$client_ip" | tr '.:' '--')"

remove_rule() {
  az sql server firewall-rule delete --subscription "$subscription" --resource-group "$AZURE_RESOURCE_GROUP" \
    --server "$AZURE_SQL_SERVER_NAME" --name "$rule" --output none || echo "grant-sql-access: could not remove firewall rule $rule; remove it by hand" >&2
}

echo "grant-sql-access: allowing $client_ip on $AZURE_SQL_SERVER_NAME for this step"
az sql server firewall-rule create --subscription "$subscription" --resource-group "$AZURE_RESOURCE_GROUP" \
  --server "$AZURE_SQL_SERVER_NAME" --name "$rule" --start-ip-address "$client_ip" --end-ip-address "$client_ip" \
  --output none
trap remove_rule EXIT

# A new firewall rule can take a little while to apply.
attempt=1
until sqlcmd -S "tcp:$AZURE_SQL_SERVER_FQDN,1433" -d "$AZURE_SQL_DATABASE" \
  --authentication-method ActiveDirectoryDefault -b \
  -v APP_NAME="$AZURE_FUNCTION_APP_NAME" -v APP_CLIENT_ID="$AZURE_FUNCTION_APP_CLIENT_ID" \
  -i "$script_dir/app-database-user.sql"; do
  if [ "$attempt" -ge 5 ]; then
    echo "grant-sql-access: sqlcmd failed $attempt times; see above" >&2
    exit 1
  fi
  attempt=$((attempt + 1))
  sleep 15
done
echo "grant-sql-access: $AZURE_FUNCTION_APP_NAME is a user of $AZURE_SQL_DATABASE (db_datareader, db_datawriter, db_ddladmin)"
