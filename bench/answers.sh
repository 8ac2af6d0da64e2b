#!/usr/bin/env bash
# Answers from afar under `wrangler dev`: the latency from the POST to the text
# in a real tmux pane (N answers to a stand-in agent that asks again after
# each), the Enter's delay, the relay's cost while idle (CPU, RSS, requests to
# the Worker), and the hook's foreground cost for a reply in tmux with the
# relay running, beside the same hook outside tmux.
#
#   bash bench/answers.sh          # writes bench/results/answers.json
set -euo pipefail
source "$(dirname "$0")/lib.sh"
command -v hyperfine > /dev/null || { apt-get install -y hyperfine > /dev/null 2>&1 || { apt-get update > /dev/null && apt-get install -y hyperfine > /dev/null; }; }
cargo build --quiet --release -p needs-you
start_needs_you 8792
export TMUX_TMPDIR=$WORK/tmux REPORTER=$PWD/target/release/report-prompt
mkdir -p "$TMUX_TMPDIR"
trap 'tmux -S "$WORK/bench.sock" kill-server 2>/dev/null; pkill -f "__relay --state-dir $WORK/state" 2>/dev/null; cleanup' EXIT
node bench/answers.mjs "$URL" "$OWNER" "$TASK" "$WORK" --n "${N:-30}" --idle-s "${IDLE_S:-60}" \
  --wrangler-log "$WORK/ours.log" | tee bench/results/answers.json
