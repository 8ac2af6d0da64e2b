#!/usr/bin/env bash
# The Worker's start on a cold isolate under `wrangler dev`: ROUNDS fresh
# processes a build (spawn to ready, the first request alone); p50 and p95.
#
#   bash bench/startup.sh                    # this tree's build
#   BEFORE=DIR bash bench/startup.sh         # beside another checkout's build/
#                                            # (built there first), in turn
#
# Writes bench/results/startup.json. Cloudflare's limit on a Worker's start
# is 1 s of CPU.
set -euo pipefail
source "$(dirname "$0")/../scripts/env.sh"
cd "$NEEDS_YOU_ROOT"
bash scripts/setup.sh
bash scripts/build.sh > /dev/null
mkdir -p bench/results
builds="this=$NEEDS_YOU_ROOT"
if [ -n "${BEFORE:-}" ]; then
  [ -f "$BEFORE/build/index_bg.wasm" ] || { echo "startup: $BEFORE/build/index_bg.wasm is missing: build it there first" >&2; exit 1; }
  builds="$builds before=$BEFORE"
fi
BUILDS="$builds" node bench/startup.mjs | tee bench/results/startup.json
