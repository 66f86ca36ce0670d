#!/usr/bin/env sh
# azd postprovision hook: what ARM cannot do. The data-protection key ring into the Key Vault, then the app's
# user in the orders database. Each step is safe to run again (`azd hooks run postprovision`).
set -eu
script_dir=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
sh "$script_dir/create-data-protection-keys.sh"
sh "$script_dir/grant-sql-access.sh"
