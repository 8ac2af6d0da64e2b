#!/usr/bin/env bash
# Show terminal under `wrangler dev`: the time from asking to the first
# screen (N views), from a change on the pane to a view that follows it (N
# changes), the bytes an open view takes on a busy pane (a build printing 10
# lines a second) per screen and per minute, and the relay's CPU while a view
# is open beside while none is.
#
#   bash bench/screen.sh           # writes bench/results/screen.json
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cargo build --quiet --release -p needs-you
start_needs_you 8793
export REPORTER=$PWD/target/release/report-prompt
trap 'tmux -S "$WORK/quiet.sock" kill-server 2>/dev/null; tmux -S "$WORK/busy.sock" kill-server 2>/dev/null; pkill -f "__relay --state-dir $WORK/state" 2>/dev/null; cleanup' EXIT
node bench/screen.mjs "$URL" "$OWNER" "$TASK" "$WORK" --n "${N:-30}" --busy-s "${BUSY_S:-60}" \
  --idle-s "${IDLE_S:-30}" | tee bench/results/screen.json
