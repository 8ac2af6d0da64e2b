#!/usr/bin/env bash
# What each operation costs one deployment: D1 rows read and written (D1's
# own result metadata), D1 calls and statements, Durable Object requests and
# subrequests, counted by bench/meter/index.js around the build under
# Miniflare, on a fresh database and on one seeded with OWNERS owners of 10
# tasks each and HISTORY closed questions of the measured owner. Prints a
# Markdown table (the one in bench/README.md) and writes bench/results/capacity.json.
#
#   bash bench/capacity.sh                    # OWNERS=10000 HISTORY=50000
set -euo pipefail
source "$(dirname "$0")/../scripts/env.sh"
cd "$NEEDS_YOU_ROOT"
bash scripts/setup.sh
bash scripts/build.sh > /dev/null
mkdir -p bench/results
node bench/capacity.mjs --owners "${OWNERS:-10000}" --history "${HISTORY:-50000}" --json bench/results/capacity.json
