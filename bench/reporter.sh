#!/usr/bin/env bash
# The reporter's foreground cost, the time a CLI waits for its hook, on four
# paths, side by side in one hyperfine run with `node -e ''` (what a Node.js
# reporter pays at start-up on every event), and the npm package's
# report-prompt on one of them: its static musl binary, as the installed hooks
# and `needs-you run` run it, and its Node launcher, which only a person's
# command or a plugin's hook outside `needs-you run` goes through. hyperfine runs each command
# through sh and subtracts the shell's own start-up, as the CLIs run hooks
# through a shell too.
#
#   bash bench/reporter.sh            # writes bench/results/reporter.{md,json}
#   AGAINST=/other/report-prompt bash bench/reporter.sh
#                                     # and that build on the same paths, side by side
set -euo pipefail
cd "$(dirname "$0")/.."
command -v hyperfine > /dev/null || { apt-get install -y hyperfine > /dev/null 2>&1 || { apt-get update > /dev/null && apt-get install -y hyperfine > /dev/null; }; }
cargo build --quiet --release -p needs-you
BIN=$PWD/target/release/report-prompt
WORK=$(mktemp -d)
# The npm packages (scripts/npm-pack.sh), installed into a scratch prefix.
ls dist/npm/needs-you-*.tgz > /dev/null 2>&1 || bash scripts/npm-pack.sh > /dev/null
npm install -g --prefix "$WORK/npm" --no-audit --no-fund --loglevel=error dist/npm/needs-you-*.tgz > /dev/null
NPM_LAUNCHER=$WORK/npm/bin/report-prompt
NPM_NATIVE=$(echo "$WORK"/npm/lib/node_modules/@needs-you/*/bin/report-prompt)
mkdir -p bench/results
python3 tests/support/sink.py > "$WORK/port" &
SINK=$!
trap 'kill $SINK 2>/dev/null; rm -rf "$WORK"' EXIT
while [ ! -s "$WORK/port" ]; do sleep 0.05; done
UP="http://127.0.0.1:$(cat "$WORK/port")"
DOWN="http://127.0.0.1:9"   # the discard port: nobody listens

echo '{"session_id":"bench","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_response":{"stdout":"a\nb"}}' > "$WORK/post.json"
echo '{"session_id":"bench","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"All tests pass."}' > "$WORK/stop.json"
echo '{"session_id":"bench-q","hook_event_name":"PreToolUse","tool_name":"AskUserQuestion","tool_input":{"questions":[{"question":"Which auth strategy?","header":"Auth","options":[{"label":"OAuth"},{"label":"Email"}]}]}}' > "$WORK/ask.json"

export NEEDS_YOU_TOKEN=nyt_bench
# The guard exactly as `report-prompt install` writes it (the state directory
# found from the environment), with that environment pointing at a scratch folder.
export NEEDS_YOU_STATE_DIR=$WORK/idle
guard() { echo "if [ -e \"\${NEEDS_YOU_STATE_DIR:-\${XDG_RUNTIME_DIR:-\$HOME/.cache}/needs-you}/open\" ]; then exec '$1' --cli claude-code; else cat >/dev/null; fi"; }
# Each path of the hook for this build and, with AGAINST, that build right
# after it: adjacent, so that what the machine does meanwhile weighs on both.
# In a path's command, @BIN@ is the build's report-prompt, @WHO@ names its
# own state folders.
RUNS_OF=()
path() { # NAME COMMAND
  local cmd=${2//@BIN@/$BIN}
  RUNS_OF+=(-n "$1" "${cmd//@WHO@/this}")
  if [ -n "${AGAINST:-}" ]; then
    cmd=${2//@BIN@/$AGAINST}
    RUNS_OF+=(-n "against: $1" "${cmd//@WHO@/against}")
  fi
}
path "closing event, guard, nothing open" "{ $(guard @BIN@); } < $WORK/post.json"
path "Stop without a question" "NEEDS_YOU_URL=$UP @BIN@ --cli claude-code --state-dir $WORK/idle < $WORK/stop.json"
path "question, send detached" "NEEDS_YOU_URL=$UP @BIN@ --cli claude-code --state-dir $WORK/up-@WHO@ < $WORK/ask.json"
path "question, server unreachable" "NEEDS_YOU_URL=$DOWN @BIN@ --cli claude-code --state-dir $WORK/down-@WHO@ < $WORK/ask.json"
hyperfine --warmup 20 --runs "${RUNS:-300}" --export-markdown bench/results/reporter.md --export-json bench/results/reporter.json \
  "${RUNS_OF[@]}" \
  -n "Stop without a question, npm's static binary" "NEEDS_YOU_URL=$UP $NPM_NATIVE --cli claude-code --state-dir $WORK/idle < $WORK/stop.json" \
  -n "Stop without a question, npm's launcher" "NEEDS_YOU_URL=$UP $NPM_LAUNCHER --cli claude-code --state-dir $WORK/idle < $WORK/stop.json" \
  -n "node -e ''" "node -e ''"
