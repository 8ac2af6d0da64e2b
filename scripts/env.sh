# Sourced by the other scripts: where the pinned tools live, and the variables
# that keep worker-build from downloading anything (only package registries are
# reachable on our machines).
NEEDS_YOU_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NEEDS_YOU_TOOLS="${NEEDS_YOU_TOOLS:-$HOME/.cache/needs-you/tools}"
WORKER_BUILD_VERSION=0.8.7
# The Python lint (PyPI), in a virtualenv of its own under the tools folder.
RUFF_VERSION=0.17.6
# The wasm-bindgen CLI must be the exact version of the crate: read the pin
# from Cargo.toml (`wasm-bindgen = "=X.Y.Z"`), so it is written in one place.
WASM_BINDGEN_VERSION=$(sed -n 's/^wasm-bindgen = "=\([0-9.]*\)".*/\1/p' "$NEEDS_YOU_ROOT/Cargo.toml")
[ -n "$WASM_BINDGEN_VERSION" ] || { echo "env.sh: Cargo.toml must pin wasm-bindgen as \"=X.Y.Z\"" >&2; return 1 2>/dev/null || exit 1; }

export PATH="$NEEDS_YOU_TOOLS/ruff-$RUFF_VERSION/bin:$NEEDS_YOU_TOOLS/worker-build-$WORKER_BUILD_VERSION/bin:$NEEDS_YOU_TOOLS/wasm-bindgen-$WASM_BINDGEN_VERSION/bin:$NEEDS_YOU_ROOT/node_modules/.bin:$PATH"
export WASM_BINDGEN_BIN="$NEEDS_YOU_TOOLS/wasm-bindgen-$WASM_BINDGEN_VERSION/bin/wasm-bindgen"
export ESBUILD_BIN="$NEEDS_YOU_ROOT/node_modules/.bin/esbuild"
export WASM_OPT_BIN="$NEEDS_YOU_ROOT/node_modules/.bin/wasm-opt"
# wrangler: no telemetry, no update checks (they would only time out here).
export WRANGLER_SEND_METRICS=false
export WRANGLER_SEND_ERROR_REPORTS=false
export CI_NO_UPDATE_CHECK=1
# wrangler dev would fetch the `Request.cf` object from Cloudflare at start and
# print a stack trace when it cannot: a newcomer's first screen should hold no
# error that is not one.
export CLOUDFLARE_CF_FETCH_ENABLED=false
