#!/usr/bin/env bash
# Decisions from afar with the real Claude Code (scripts/setup-live.sh) in
# tmux, against a mock model and the Worker in Miniflare: the time from the
# POST of an allow to the command having run, over N decisions, and what a
# waiting PermissionRequest hook costs while its dialog is on screen.
#
#   bash bench/decisions.sh        # writes bench/results/decisions.json
#   AGAINST=/other/checkout/target/release bash bench/decisions.sh
#                                  # and that build's binaries, side by side
set -euo pipefail
source "$(dirname "$0")/../scripts/env.sh"
cd "$NEEDS_YOU_ROOT"
bash scripts/setup.sh
bash scripts/setup-live.sh
bash scripts/build.sh > /dev/null
cargo build --quiet --release -p needs-you
mkdir -p bench/results
node bench/decisions.mjs --n "${N:-30}" --window-s "${WINDOW_S:-10}" ${AGAINST:+--against "$AGAINST"} | tee bench/results/decisions.json
