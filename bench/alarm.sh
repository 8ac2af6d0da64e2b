#!/usr/bin/env bash
# Alarm lateness at the real 15 s default under `wrangler dev`: 25 dialogs,
# each delivered to a webhook on a local sink; lateness is the time from the
# report being sent to its delivery, minus 15 s.
#
#   bash bench/alarm.sh        # writes bench/results/alarm.json
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

python3 bench/sink.py --record "$WORK/record.jsonl" > "$WORK/port" &
PIDS+=($!)
wrangler d1 migrations apply DB --local --persist-to "$WORK/state" < /dev/null > /dev/null
wrangler dev --ip 127.0.0.1 --port 8787 --persist-to "$WORK/state" --var "ADMIN_TOKEN:$ADMIN" \
  --show-interactive-dev-session=false > "$WORK/dev.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 600); do curl -fs -o /dev/null http://127.0.0.1:8787/v1/health && break; sleep 0.5; done
while [ ! -s "$WORK/port" ]; do sleep 0.05; done

field() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.stdout.write(JSON.parse(s)[process.argv[1]]))' "$1"; }
OWNER=$(curl -fs -H "authorization: Bearer $ADMIN" -d '{"name":"bench"}' http://127.0.0.1:8787/v1/owners | field token)
TASK=$(curl -fs -H "authorization: Bearer $OWNER" -d '{"name":"bench"}' http://127.0.0.1:8787/v1/tasks | field credential)
curl -fs -X PUT -H "authorization: Bearer $OWNER" -d "{\"url\":\"http://127.0.0.1:$(cat "$WORK/port")/hook\",\"secret\":\"bench-secret-0123456789\"}" \
  http://127.0.0.1:8787/v1/channels/webhook > /dev/null

node bench/alarm.mjs http://127.0.0.1:8787 "$TASK" "$WORK/record.jsonl" --n "${N:-25}" | tee bench/results/alarm.json
