#!/usr/bin/env bash
# The Worker's wasm size (raw and gzipped) and its build time: the Worker crate
# rebuilt from a warm dependency cache, then wasm-bindgen, wasm-opt and esbuild
# (scripts/build.sh).
#
#   bash bench/size.sh         # writes bench/results/size.json
#
# And the page's first load: every file its service worker keeps for the
# shell (sw.js's SHELL_FILES, `/` being index.html), the card builder's wasm
# among them, each gzipped as a browser receives it.
#
# Fails when the gzipped wasm is over its budget (BUDGET_GZ, 384 KB, on stable
# Rust with the panic hook: Cloudflare takes 3 MB on the free plan, and what a
# person pays for is the start on a cold isolate, `bash bench/startup.sh`; the
# base a workers-rs Worker cannot shed is about 196 KB, `python3
# bench/size_profile.py`), or the page's first load over its own
# (BUDGET_PAGE_GZ, 150 KB).
set -euo pipefail
source "$(dirname "$0")/../scripts/env.sh"
cd "$NEEDS_YOU_ROOT"
bash scripts/setup.sh
mkdir -p bench/results
bash scripts/build.sh > /dev/null 2>&1      # warm the dependency cache
touch src/lib.rs
start=$(date +%s.%N)
bash scripts/build.sh > /dev/null 2>&1
end=$(date +%s.%N)
raw=$(stat -c %s build/index_bg.wasm)
gz=$(gzip -9 -c build/index_bg.wasm | wc -c)
page_gz=0
for f in $(sed -n '/^const SHELL_FILES/,/\];/p' public/sw.js | grep -o '"/[^"]*"' | tr -d '"'); do
  [ "$f" = / ] && f=/index.html
  page_gz=$((page_gz + $(gzip -9 -c "public$f" | wc -c)))
done
card_gz=$(gzip -9 -c public/card.wasm | wc -c)
printf '{"wasm_bytes": %s, "wasm_gzip_bytes": %s, "build_s_warm_deps": %.1f, "page_first_load_gzip_bytes": %s, "card_wasm_gzip_bytes": %s}\n' \
  "$raw" "$gz" "$(awk -v a="$start" -v b="$end" 'BEGIN{print b-a}')" "$page_gz" "$card_gz" \
  | tee bench/results/size.json
if [ "$page_gz" -gt "${BUDGET_PAGE_GZ:-150000}" ]; then
  echo "size: the page's first load is $page_gz bytes gzipped, over its budget of ${BUDGET_PAGE_GZ:-150000}" >&2
  exit 1
fi
budget=${BUDGET_GZ:-384000}
if [ "$gz" -gt "$budget" ]; then
  echo "size: the wasm is $gz bytes gzipped, over its budget of $budget" >&2
  exit 1
fi
