#!/usr/bin/env sh
# azd preprovision hook: what the Bicep cannot find out for itself before it runs. Safe to run again.
set -eu
script_dir=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
sh "$script_dir/key-vault-create-mode.sh"
