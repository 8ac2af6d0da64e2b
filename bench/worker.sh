#!/usr/bin/env bash
# Report throughput and latency of the Worker under `wrangler dev`, side by side
# in one run with two floors, all loaded from a second process (bench/load.mjs)
# with open+close pairs in interleaved rounds (every target once a round), and
# the median of the rounds' ratios to the fair floor with their spread:
#   fair     bench/fair: a JavaScript Worker doing exactly what ours does (the
#            same D1 batch, the same notifier object storing its question)
#   insert   bench/floor: one D1 insert per report, the cost of any design
#
#   bash bench/worker.sh        # writes bench/results/worker.json
#   KIND=reply PAIRS=3000 CONCURRENCY=16 bash bench/worker.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
# Three wrangler devs start at once: each gets its own inspector port, or two
# race for the default one and one runtime fails to start.

# Each floor names its own configuration, so that wrangler never takes the
# root's (and its build) from a folder above.
floor() { # DIR PORT
  cd "bench/$1"
  wrangler d1 migrations apply DB --local --config wrangler.toml --persist-to "$WORK/$1" < /dev/null > /dev/null
  exec wrangler dev --config wrangler.toml --ip 127.0.0.1 --port "$2" --inspector-port "$((9200 + $2 % 100))" \
    --persist-to "$WORK/$1" --show-interactive-dev-session=false
}
export -f floor
export WORK
setsid bash -c 'floor floor 8788' > "$WORK/floor.log" 2>&1 &
PIDS+=($!)
setsid bash -c 'floor fair 8789' > "$WORK/fair.log" 2>&1 &
PIDS+=($!)
start_needs_you 8787
wait_up http://127.0.0.1:8788
wait_up http://127.0.0.1:8789
many_tasks 64   # 600 reports a minute per task (wrangler.toml): a load spread over 64 stays under it
FAIR=$(curl -fs -X POST "http://127.0.0.1:8789/setup?tasks=64")   # the same for the fair floor
node bench/load.mjs "needs-you=$URL=$TASKS" "fair=http://127.0.0.1:8789=$FAIR" "insert=http://127.0.0.1:8788=none" \
  --pairs "${PAIRS:-2000}" --concurrency "${CONCURRENCY:-8}" --rounds "${ROUNDS:-8}" --kind "${KIND:-dialog}" \
  | tee bench/results/worker.json
# The ratio to the fair floor round by round (both ran in the same round, a
# moment apart), its median and spread: one run says whether 0.95 is met.
node -e 'const [a, f, i] = require("./bench/results/worker.json");
  const ratios = a.per_round_pairs_per_s.map((x, r) => x / f.per_round_pairs_per_s[r]).sort((x, y) => x - y);
  const median = ratios.length % 2 ? ratios[(ratios.length - 1) / 2] : (ratios[ratios.length / 2 - 1] + ratios[ratios.length / 2]) / 2;
  console.log(`needs-you / fair floor, per round: median ${median.toFixed(2)} (from ${ratios[0].toFixed(2)} to ${ratios.at(-1).toFixed(2)}, ${ratios.length} rounds); whole run ${(a.pairs_per_s / f.pairs_per_s).toFixed(2)}`);
  console.log(`needs-you / one-insert floor: ${(a.pairs_per_s / i.pairs_per_s).toFixed(2)}`)'
