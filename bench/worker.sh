#!/usr/bin/env bash
# Report throughput and latency of the Worker under `wrangler dev`, side by side
# in one run with the floor (bench/floor: a JavaScript Worker doing one D1
# insert per report), both loaded from a second process (bench/load.mjs) with
# open+close pairs in alternating rounds.
#
#   bash bench/worker.sh        # writes bench/results/worker.json
#   KIND=reply PAIRS=3000 CONCURRENCY=16 bash bench/worker.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"

(cd bench/floor && wrangler d1 migrations apply DB --local --persist-to "$WORK/floor" < /dev/null > /dev/null \
  && exec wrangler dev --ip 127.0.0.1 --port 8788 --persist-to "$WORK/floor" --show-interactive-dev-session=false) \
  > "$WORK/floor.log" 2>&1 &
PIDS+=($!)
start_needs_you 8787
wait_up http://127.0.0.1:8788

node bench/load.mjs "needs-you=$URL=$TASK" "floor=http://127.0.0.1:8788=none" \
  --pairs "${PAIRS:-2000}" --concurrency "${CONCURRENCY:-8}" --rounds "${ROUNDS:-4}" --kind "${KIND:-dialog}" \
  | tee bench/results/worker.json
node -e 'const [a, b] = require("./bench/results/worker.json"); console.log(`ratio of the floor: ${(a.pairs_per_s / b.pairs_per_s).toFixed(2)}`)'
