#!/usr/bin/env bash
# Deploys the Worker and its D1 migrations, with no configuration to edit:
#
#   npx wrangler login && bash scripts/deploy.sh
#
# The first deploy creates the database (unless one named needs-you exists)
# and writes its id into wrangler.toml: commit that change. Migrations are
# applied before every deploy, so that new code never runs on an old schema.
# The secrets are set apart, once (.dev.vars.example).
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$NEEDS_YOU_ROOT"
bash scripts/setup.sh
# The id is found with `d1 list`: `d1 info needs-you` would look the name up in
# this configuration first, and fail on its missing id.
if ! grep -q '^database_id *=' wrangler.toml; then
  found=0
  wrangler d1 list --json | bash scripts/write-d1-id.sh wrangler.toml || found=$?
  if [ "$found" = 3 ]; then
    wrangler d1 create needs-you
    wrangler d1 list --json | bash scripts/write-d1-id.sh wrangler.toml
  elif [ "$found" != 0 ]; then
    exit "$found"
  fi
fi
wrangler d1 migrations apply DB --remote
wrangler deploy "$@"
