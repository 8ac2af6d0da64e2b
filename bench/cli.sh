#!/usr/bin/env bash
# The binaries before and after this round's reshaping, side by side: the
# size of `needs-you` and `report-prompt`, `needs-you --help` and
# `--version` start-up (hyperfine, no shell), and the hook's foreground cost
# on a `Stop` without a question and a closing event with nothing open
# (hyperfine through sh, as CLIs run hooks). BEFORE is a commit (the last one
# before the command line moved to its own crate), built once into ~/.cache.
#
#   bash bench/cli.sh          # writes bench/results/cli.{json,md}
set -euo pipefail
cd "$(dirname "$0")/.."
command -v hyperfine > /dev/null || { apt-get install -y hyperfine > /dev/null 2>&1 || { apt-get update > /dev/null && apt-get install -y hyperfine > /dev/null; }; }
BEFORE=${BEFORE:-102de45}
OLD_DIR=$HOME/.cache/needs-you/bench-cli-$BEFORE
mkdir -p bench/results
cargo build --quiet --release -p needs-you
if [ ! -x "$OLD_DIR/report-prompt" ]; then
  tree=$(mktemp -d)
  git worktree add --quiet --detach "$tree" "$BEFORE"
  (cd "$tree" && CARGO_TARGET_DIR="$OLD_DIR/target" cargo build --quiet --release -p report-prompt)
  cp "$OLD_DIR/target/release/report-prompt" "$OLD_DIR/target/release/needs-you" "$OLD_DIR/"
  git worktree remove --force "$tree"
fi
NEW=$PWD/target/release
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
echo '{"session_id":"bench","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"All tests pass."}' > "$WORK/stop.json"
echo '{"session_id":"bench","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}' > "$WORK/post.json"
export NEEDS_YOU_URL=http://127.0.0.1:9 NEEDS_YOU_TOKEN=nyt_bench
hyperfine -N --warmup 20 --runs "${RUNS:-300}" --export-json "$WORK/startup.json" \
  -n "needs-you --help, before" "$OLD_DIR/needs-you --help" -n "needs-you --help, after" "$NEW/needs-you --help" \
  -n "needs-you --version, before" "$OLD_DIR/needs-you --version" -n "needs-you --version, after" "$NEW/needs-you --version" > /dev/null
hyperfine --warmup 20 --runs "${RUNS:-300}" --export-json "$WORK/hook.json" \
  -n "Stop without a question, before" "$OLD_DIR/report-prompt --cli claude-code --state-dir $WORK/a < $WORK/stop.json" \
  -n "Stop without a question, after" "$NEW/report-prompt --cli claude-code --state-dir $WORK/b < $WORK/stop.json" \
  -n "PostToolUse, nothing open, before" "$OLD_DIR/report-prompt --cli claude-code --state-dir $WORK/a < $WORK/post.json" \
  -n "PostToolUse, nothing open, after" "$NEW/report-prompt --cli claude-code --state-dir $WORK/b < $WORK/post.json" > /dev/null
node -e '
  const fs = require("fs");
  const rows = [process.argv[1], process.argv[2]].flatMap((f) => JSON.parse(fs.readFileSync(f)).results);
  const size = (p) => fs.statSync(p).size;
  const out = {
    bytes: { "needs-you": [size(process.argv[3] + "/needs-you"), size(process.argv[4] + "/needs-you")],
             "report-prompt": [size(process.argv[3] + "/report-prompt"), size(process.argv[4] + "/report-prompt")] },
    median_ms: Object.fromEntries(rows.map((r) => [r.command, +(r.median * 1000).toFixed(3)])),
  };
  console.log(JSON.stringify(out, null, 2));
' "$WORK/startup.json" "$WORK/hook.json" "$OLD_DIR" "$NEW" | tee bench/results/cli.json
