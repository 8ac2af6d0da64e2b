#!/usr/bin/env bash
# What `needs-you run` adds to starting a command: `needs-you run -- true`
# beside `true`, in one hyperfine run against `wrangler dev` (it creates a task
# and revokes it: two requests to the Worker on this machine).
#
#   bash bench/run.sh            # writes bench/results/run.{md,json}
set -euo pipefail
source "$(dirname "$0")/lib.sh"
command -v hyperfine > /dev/null || { apt-get install -y hyperfine > /dev/null 2>&1 || { apt-get update > /dev/null && apt-get install -y hyperfine > /dev/null; }; }
cargo build --quiet --release -p needs-you
start_needs_you 8791
export XDG_CONFIG_HOME=$WORK/config
mkdir -p "$XDG_CONFIG_HOME/needs-you" && chmod 700 "$XDG_CONFIG_HOME/needs-you"
printf '{"url":"%s","token":"%s"}' "$URL" "$OWNER" > "$XDG_CONFIG_HOME/needs-you/login.json"
chmod 600 "$XDG_CONFIG_HOME/needs-you/login.json"
export TMUX=bench   # as inside tmux: no "not in tmux" line on every run
hyperfine -N --warmup 5 --runs "${RUNS:-60}" \
  --export-json bench/results/run.json --export-markdown bench/results/run.md \
  'true' "$PWD/target/release/needs-you run -- true"
