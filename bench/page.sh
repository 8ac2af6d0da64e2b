#!/usr/bin/env bash
# The page, in headless Chromium against `wrangler dev`: its first-load weight
# (gzipped), report-to-card and close-to-gone latency over N reports, the
# Worker requests an idle visible page makes per minute, and the README's
# screenshots (docs/screenshots/); then report to card for what a machine
# that seals sends, beside a permission in the clear, on a page that holds
# the content key (bench/page-sealed.mjs, in Miniflare).
#
#   bash bench/page.sh            # writes bench/results/page.json and page-sealed.json
#   N=60 IDLE_S=120 bash bench/page.sh   (N reports, 20 unless given; N rounds of three sealed)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
start_needs_you 8790
node bench/page.mjs "$URL" "$OWNER" "$TASK" --n "${N:-20}" --idle-s "${IDLE_S:-60}" | tee bench/results/page.json
# The owner's `needs-you pair` gives the page its content key.
cargo build --quiet --release -p needs-you -p needs-you-reporter
node bench/page-sealed.mjs --n "${N:-20}" | tee bench/results/page-sealed.json
