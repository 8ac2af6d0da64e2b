#!/usr/bin/env bash
# What building a card in the page costs (bench/card.mjs), after building
# public/card.wasm (scripts/build.sh).
#
#   bash bench/card.sh        # writes bench/results/card.json
set -euo pipefail
source "$(dirname "$0")/../scripts/env.sh"
cd "$NEEDS_YOU_ROOT"
bash scripts/build.sh > /dev/null 2>&1
node bench/card.mjs
