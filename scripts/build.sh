#!/usr/bin/env bash
# Builds the Worker into build/ (wasm, JS shim) with worker-build, and the
# page's card builder into public/card.wasm, offline.
# wrangler runs this as its build command (at every start of `wrangler dev`,
# and again whenever it sees src/ change); so do the tests. A build newer
# than every source it comes from is kept as it is: a rebuild with nothing
# changed took 20 s, twice, at each start of dev.sh.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$NEEDS_YOU_ROOT"

# The page's version, the workspace's (Cargo.toml): the page compares it with
# the Worker's. Written only when it changes, so that it starts no rebuild.
version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
line="export const VERSION = \"$version\";"
[ "$(cat public/version.js 2>/dev/null)" = "$line" ] || printf '%s\n' "$line" > public/version.js

# The page's card builder (crates/needs-you-card), the core's card code for
# wasm32: the page builds each card it answers from the request itself.
card=public/card.wasm
if [ ! -f "$card" ] || [ -n "${NEEDS_YOU_REBUILD:-}" ] ||
   [ -n "$(find crates/needs-you-card crates/needs-you-core Cargo.toml Cargo.lock scripts/build.sh -newer "$card" -print -quit)" ]; then
  cargo build --quiet --release --locked --target wasm32-unknown-unknown -p needs-you-card \
    --config 'profile.release.package.needs-you-core.opt-level="z"'
  "$WASM_OPT_BIN" target/wasm32-unknown-unknown/release/needs_you_card.wasm -o "$card" -Oz --strip-debug \
    --enable-mutable-globals --enable-sign-ext --enable-nontrapping-float-to-int --enable-bulk-memory
fi
# Its SHA-256, which card.js checks before it runs the wasm: the builder is
# held to the page's own scripts, not to whatever the server serves as it.
# Written only when it changes, like version.js.
line="export const CARD_SHA256 = \"$(sha256sum "$card" | cut -d' ' -f1)\";"
[ "$(cat public/card-hash.js 2>/dev/null)" = "$line" ] || printf '%s\n' "$line" > public/card-hash.js

out=build/index_bg.wasm
if [ -f "$out" ] && [ -f build/index.js ] && [ -z "${NEEDS_YOU_REBUILD:-}" ] &&
   [ -z "$(find src crates/needs-you-core Cargo.toml Cargo.lock scripts/build.sh scripts/env.sh -newer "$out" -print -quit)" ]; then
  exit 0
fi
# The root Cargo.toml is also the workspace, whose default members are the
# native crates: name the Worker package explicitly.
# The core crate is built fast for the native crates (Cargo.toml) and small
# for the Worker: 16 KB of the gzipped wasm, measured.
# The same stable toolchain as every other crate: a panic unwinds nowhere
# (wasm32 aborts), and its message and line reach the log (src/panic.rs).
worker-build --release -- --package needs-you-worker \
  --config 'profile.release.package.needs-you-core.opt-level="z"'
# worker-build keeps the wasm's function-name section (it passes --debuginfo to
# wasm-opt): about 125 KB of names that nothing in the runtime reads (a panic
# is logged with its Rust message and location). Optimise once more for size
# (`-Os` after worker-build's own pass gzips 2.8 KB smaller, `-Oz` 2.2 KB, for
# about 6 s of the build) and strip the names, with the same wasm features
# worker-build enables.
"$WASM_OPT_BIN" build/index_bg.wasm -o build/index_bg.wasm -Os --strip-debug \
  --enable-mutable-globals --enable-sign-ext --enable-nontrapping-float-to-int \
  --enable-bulk-memory --enable-multivalue --enable-reference-types --enable-exception-handling
