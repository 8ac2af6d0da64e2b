#!/usr/bin/env bash
# Installs what the project needs, at pinned versions, skipping what is already
# there: the wasm32 target, worker-build and wasm-bindgen-cli (built from
# crates.io into ~/.cache/needs-you/tools, shared by every clone), the npm
# packages (wrangler, Miniflare, esbuild, binaryen, playwright-core, http_ece,
# ESLint) from package-lock.json, ruff (PyPI) into its own virtualenv, and
# Debian's Chromium for the page's tests.
# A fresh machine takes about 15 minutes (two cargo installs); after that, seconds.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$NEEDS_YOU_ROOT"

say() { printf 'setup: %s\n' "$*" >&2; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi
# cargo install <crate> <version> <binary>: into its own versioned folder, so a
# version bump installs beside the old one and never half-overwrites it.
install_crate() {
  local crate=$1 version=$2 bin=$3 root="$NEEDS_YOU_TOOLS/$4"
  if [ -x "$root/bin/$bin" ] && "$root/bin/$bin" --version 2>/dev/null | grep -q "$version"; then
    return
  fi
  say "building $crate $version (a few minutes, once per machine)"
  cargo install --quiet "$crate" --version "$version" --root "$root"
}
install_crate worker-build "$WORKER_BUILD_VERSION" worker-build "worker-build-$WORKER_BUILD_VERSION"
install_crate wasm-bindgen-cli "$WASM_BINDGEN_VERSION" wasm-bindgen "wasm-bindgen-$WASM_BINDGEN_VERSION"

# ruff, the Python lint, from PyPI into a virtualenv of its own.
if [ "$("$NEEDS_YOU_TOOLS/ruff-$RUFF_VERSION/bin/ruff" --version 2>/dev/null)" != "ruff $RUFF_VERSION" ]; then
  say "installing ruff $RUFF_VERSION (PyPI)"
  rm -rf "$NEEDS_YOU_TOOLS/ruff-$RUFF_VERSION"
  python3 -m venv "$NEEDS_YOU_TOOLS/ruff-$RUFF_VERSION"
  "$NEEDS_YOU_TOOLS/ruff-$RUFF_VERSION/bin/pip" install --quiet --disable-pip-version-check "ruff==$RUFF_VERSION"
fi

# npm ci when node_modules is missing or older than the lock file.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "installing npm packages"
  npm ci --no-audit --no-fund --loglevel=error
fi

# The command line's tests run real tmux.
if ! command -v tmux > /dev/null; then
  say "installing tmux (Debian package)"
  apt-get install -y -qq tmux > /dev/null 2>&1 || { apt-get update -qq > /dev/null && apt-get install -y -qq tmux > /dev/null; }
fi

# The page's tests drive Debian's Chromium (playwright-core downloads no browser).
if [ -z "${CHROMIUM_PATH:-}" ] && ! command -v chromium > /dev/null; then
  say "installing chromium (Debian package)"
  apt-get install -y -qq chromium > /dev/null 2>&1 || { apt-get update -qq > /dev/null && apt-get install -y -qq chromium > /dev/null; }
fi
