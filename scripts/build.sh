#!/usr/bin/env bash
# Builds the Worker into build/ (wasm, JS shim) with worker-build, offline.
# wrangler runs this as its build command; so do the tests.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$NEEDS_YOU_ROOT"
# The root Cargo.toml is also the workspace, whose default members are the
# native crates: name the Worker package explicitly.
exec worker-build --release -- --package needs-you
