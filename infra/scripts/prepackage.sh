#!/usr/bin/env sh
# azd project-level prepackage hook, and predeploy too (so that `azd deploy` alone deploys what the sources hold
# now): the one step that installs and builds. It runs `npm ci` once, the three builds (the Function App's, the
# storefront's and the partner's, each a type check as well), then writes the three packages azure.yaml's services
# deploy as they are (tools/azd-packages.ts). No service installs or builds in the project folder, so nothing runs
# there twice at once, however many services azd packages in parallel. When the packages were already made from
# these sources and settings (DURABLE_BACKEND, NODE_VERSION), it keeps them and does nothing: the predeploy run
# within one `azd up` costs a digest.
set -eu
cd "$(dirname -- "$0")/../.."

if [ -d node_modules ] && npx --no-install tsx tools/azd-packages.ts --check; then
  exit 0
fi
npm ci --no-audit --no-fund
npm run build
npm run build:storefront
npm run build:partner
npx --no-install tsx tools/azd-packages.ts
