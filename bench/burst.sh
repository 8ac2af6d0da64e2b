#!/usr/bin/env bash
# 200 hooks at once against a slow server (200 ms an answer), side by side:
# this tree's reporter and the one before the outbox (commit 226ee0b, each
# report with its own detached sender), built once into ~/.cache.
#
#   bash bench/burst.sh        # writes bench/results/burst.json
#   N=400 DELAY_MS=500 BEFORE=<commit> bash bench/burst.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BEFORE=${BEFORE:-226ee0b}
OLD_DIR=$HOME/.cache/needs-you/bench-reporter-$BEFORE
mkdir -p bench/results
cargo build --quiet --release -p needs-you
if [ ! -x "$OLD_DIR/report-prompt" ]; then
  tree=$(mktemp -d)
  git worktree add --quiet --detach "$tree" "$BEFORE"
  (cd "$tree" && CARGO_TARGET_DIR="$OLD_DIR/target" cargo build --quiet --release -p report-prompt)
  cp "$OLD_DIR/target/release/report-prompt" "$OLD_DIR/report-prompt"
  git worktree remove --force "$tree"
fi
python3 bench/burst.py "before=$OLD_DIR/report-prompt" "after=$PWD/target/release/report-prompt" \
  --n "${N:-200}" --delay-ms "${DELAY_MS:-200}" | tee bench/results/burst.json
