#!/usr/bin/env bash
# The page, in headless Chromium against `wrangler dev`: its first-load weight
# (gzipped), report-to-card and close-to-gone latency over N reports, the
# Worker requests an idle visible page makes per minute, and the README's
# screenshots (docs/screenshots/).
#
#   bash bench/page.sh            # writes bench/results/page.json
#   N=60 IDLE_S=120 bash bench/page.sh   (N reports, 20 unless given)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
start_needs_you 8790
node bench/page.mjs "$URL" "$OWNER" "$TASK" --n "${N:-20}" --idle-s "${IDLE_S:-60}" | tee bench/results/page.json
