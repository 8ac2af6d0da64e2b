# Sourced by the other scripts: where the pinned tools live, and the variables
# that keep worker-build from downloading anything (only package registries are
# reachable on our machines).
NEEDS_YOU_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NEEDS_YOU_TOOLS="${NEEDS_YOU_TOOLS:-$HOME/.cache/needs-you/tools}"
WORKER_BUILD_VERSION=0.8.7
WASM_BINDGEN_VERSION=0.2.130   # must equal the wasm-bindgen pinned in Cargo.toml

export PATH="$NEEDS_YOU_TOOLS/worker-build-$WORKER_BUILD_VERSION/bin:$NEEDS_YOU_TOOLS/wasm-bindgen-$WASM_BINDGEN_VERSION/bin:$NEEDS_YOU_ROOT/node_modules/.bin:$PATH"
export WASM_BINDGEN_BIN="$NEEDS_YOU_TOOLS/wasm-bindgen-$WASM_BINDGEN_VERSION/bin/wasm-bindgen"
export ESBUILD_BIN="$NEEDS_YOU_ROOT/node_modules/.bin/esbuild"
export WASM_OPT_BIN="$NEEDS_YOU_ROOT/node_modules/.bin/wasm-opt"
# wrangler: no telemetry, no update checks (they would only time out here).
export WRANGLER_SEND_METRICS=false
export WRANGLER_SEND_ERROR_REPORTS=false
export CI_NO_UPDATE_CHECK=1
