#!/usr/bin/env bash
# Builds the Worker into build/ (wasm, JS shim) with worker-build, offline.
# wrangler runs this as its build command; so do the tests.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$NEEDS_YOU_ROOT"
# The root Cargo.toml is also the workspace, whose default members are the
# native crates: name the Worker package explicitly.
worker-build --release -- --package needs-you-worker
# worker-build keeps the wasm's function-name section (it passes --debuginfo to
# wasm-opt): about 125 KB of names that nothing reads (a panic is logged with
# its Rust message). Strip it, with the same wasm features worker-build enables.
"$WASM_OPT_BIN" build/index_bg.wasm -o build/index_bg.wasm --strip-debug \
  --enable-mutable-globals --enable-sign-ext --enable-nontrapping-float-to-int \
  --enable-bulk-memory --enable-multivalue --enable-reference-types --enable-exception-handling
