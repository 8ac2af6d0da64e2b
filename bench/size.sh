#!/usr/bin/env bash
# The Worker's wasm size (raw and gzipped) and its build time: the Worker crate
# rebuilt from a warm dependency cache, then wasm-bindgen, wasm-opt and esbuild
# (scripts/build.sh).
#
#   bash bench/size.sh         # writes bench/results/size.json
#
# Fails when the gzipped wasm is over its budget (BUDGET_GZ, 240 KB).
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
printf '{"wasm_bytes": %s, "wasm_gzip_bytes": %s, "build_s_warm_deps": %.1f}\n' "$raw" "$gz" "$(awk -v a="$start" -v b="$end" 'BEGIN{print b-a}')" \
  | tee bench/results/size.json
budget=${BUDGET_GZ:-240000}
if [ "$gz" -gt "$budget" ]; then
  echo "size: the wasm is $gz bytes gzipped, over its budget of $budget" >&2
  exit 1
fi
