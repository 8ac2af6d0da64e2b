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
if ! grep -q '^database_id *=' wrangler.toml; then
  wrangler d1 info needs-you --json > /dev/null 2>&1 || wrangler d1 create needs-you
  id=$(wrangler d1 info needs-you --json |
    node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(JSON.parse(s).uuid))')
  bash scripts/write-d1-id.sh wrangler.toml "$id"
fi
wrangler d1 migrations apply DB --remote
wrangler deploy "$@"
