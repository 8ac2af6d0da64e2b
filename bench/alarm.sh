#!/usr/bin/env bash
# Alarm lateness at the real 15 s default under `wrangler dev`: 25 dialogs,
# each delivered to a webhook on a local sink; lateness is the time from the
# report being sent to its delivery, minus 15 s.
#
#   bash bench/alarm.sh        # writes bench/results/alarm.json
set -euo pipefail
source "$(dirname "$0")/lib.sh"

python3 tests/support/sink.py --record "$WORK/record.jsonl" > "$WORK/port" &
PIDS+=($!)
start_needs_you 8787
while [ ! -s "$WORK/port" ]; do sleep 0.05; done
curl -fs -X PUT -H "authorization: Bearer $OWNER" \
  -d "{\"url\":\"http://127.0.0.1:$(cat "$WORK/port")/hook\",\"secret\":\"bench-secret-0123456789\"}" \
  "$URL/v1/channels/webhook" > /dev/null

node bench/alarm.mjs "$URL" "$TASK" "$WORK/record.jsonl" --n "${N:-25}" | tee bench/results/alarm.json
