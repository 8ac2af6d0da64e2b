#!/usr/bin/env bash
# Report throughput and latency of the Worker under `wrangler dev`, side by side
# in one run with the floor (bench/floor: a JavaScript Worker doing one D1
# insert per report), both loaded from a second process (bench/load.mjs) with
# open+close pairs in alternating rounds.
#
#   bash bench/worker.sh        # writes bench/results/worker.json
#   PAIRS=3000 CONCURRENCY=16 bash bench/worker.sh
set -euo pipefail
source "$(dirname "$0")/../scripts/env.sh"
cd "$NEEDS_YOU_ROOT"
bash scripts/setup.sh
mkdir -p bench/results
WORK=$(mktemp -d)
ADMIN=bench-admin-$RANDOM$RANDOM
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT

wait_up() { for _ in $(seq 1 600); do curl -fs -o /dev/null -X POST "$1/v1/health" -d '{}' 2>/dev/null && return; curl -fs -o /dev/null "$1/v1/health" 2>/dev/null && return; sleep 0.5; done; echo "$1 did not come up" >&2; exit 1; }

wrangler d1 migrations apply DB --local --persist-to "$WORK/ours" < /dev/null > /dev/null
wrangler dev --ip 127.0.0.1 --port 8787 --persist-to "$WORK/ours" --var "ADMIN_TOKEN:$ADMIN" \
  --show-interactive-dev-session=false > "$WORK/ours.log" 2>&1 &
PIDS+=($!)
(cd bench/floor && wrangler d1 migrations apply DB --local --persist-to "$WORK/floor" < /dev/null > /dev/null \
  && exec wrangler dev --ip 127.0.0.1 --port 8788 --persist-to "$WORK/floor" --show-interactive-dev-session=false) > "$WORK/floor.log" 2>&1 &
PIDS+=($!)
wait_up http://127.0.0.1:8787
wait_up http://127.0.0.1:8788

field() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.stdout.write(JSON.parse(s)[process.argv[1]]))' "$1"; }
OWNER=$(curl -fs -H "authorization: Bearer $ADMIN" -d '{"name":"bench"}' http://127.0.0.1:8787/v1/owners | field token)
TASK=$(curl -fs -H "authorization: Bearer $OWNER" -d '{"name":"bench"}' http://127.0.0.1:8787/v1/tasks | field credential)

node bench/load.mjs "needs-you=http://127.0.0.1:8787=$TASK" "floor=http://127.0.0.1:8788=none" \
  --pairs "${PAIRS:-2000}" --concurrency "${CONCURRENCY:-8}" --rounds "${ROUNDS:-4}" --kind "${KIND:-dialog}" \
  | tee bench/results/worker.json
node -e 'const r=require("./bench/results/worker.json");const [a,b]=r;console.log(`ratio of the floor: ${(a.pairs_per_s/b.pairs_per_s).toFixed(2)}`)'
