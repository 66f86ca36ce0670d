#!/usr/bin/env sh
# azd postprovision hook: what ARM cannot do. The data-protection key ring and the simulated partner's access key
# into the Key Vault (and the partner's grant on that one secret), then the apps' Key Vault references resolved
# now rather than within a day, then the app's user in the orders database. Each step is safe to run again
# (`azd hooks run postprovision`).
set -eu
script_dir=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
sh "$script_dir/create-data-protection-keys.sh"
sh "$script_dir/create-partner-access-key.sh"
sh "$script_dir/refresh-key-vault-references.sh"
sh "$script_dir/grant-sql-access.sh"
