#!/usr/bin/env bash
# Deploys the Worker and its D1 migrations, with no configuration to edit:
#
#   npx wrangler login && bash scripts/deploy.sh
#
# The first deploy has no database yet: wrangler creates it (a D1 binding
# without `database_id` is provisioned at deploy) and writes its id into
# wrangler.jsonc (commit that change), then the migrations make its tables.
# Later deploys apply new migrations first, so that the new code never runs
# on an old schema. The secrets are set apart, once (.dev.vars.example).
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$NEEDS_YOU_ROOT"
bash scripts/setup.sh
if grep -q '"database_id"' wrangler.jsonc; then
  wrangler d1 migrations apply DB --remote
  wrangler deploy "$@"
else
  wrangler deploy "$@"
  wrangler d1 migrations apply DB --remote
fi
