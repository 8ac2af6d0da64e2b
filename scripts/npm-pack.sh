#!/usr/bin/env bash
# Builds the npm packages into dist/npm/*.tgz, no Rust needed to install them:
#
#   needs-you-VERSION.tgz              the launchers (`needs-you`, `report-prompt`)
#                                      and the prebuilt Worker (`needs-you deploy`)
#   needs-you-PLATFORM-VERSION.tgz     this machine's native binaries, as the
#                                      package @needs-you/PLATFORM (static musl
#                                      on Linux, so any distribution runs them)
#
# npm installs the main package and, of its optional dependencies, the one
# platform package whose `os` and `cpu` fit; no install script runs and
# nothing is downloaded from anywhere else. The release workflow runs this on
# one machine per platform (`--platform-only` there: the main package is the
# same on every machine) and publishes every platform package, then the main
# one (.github/workflows/npm.yml). The version is the workspace's (Cargo.toml).
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$NEEDS_YOU_ROOT"
say() { printf 'npm-pack: %s\n' "$*" >&2; }
platform_only=
case "${1:-}" in
  --platform-only) platform_only=1 ;;
  "") ;;
  *) say "usage: bash scripts/npm-pack.sh [--platform-only]"; exit 2 ;;
esac

version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) platform=linux-x64 target=x86_64-unknown-linux-musl os=linux cpu=x64 ;;
  Linux-aarch64) platform=linux-arm64 target=aarch64-unknown-linux-musl os=linux cpu=arm64 ;;
  Darwin-x86_64) platform=darwin-x64 target=x86_64-apple-darwin os=darwin cpu=x64 ;;
  Darwin-arm64) platform=darwin-arm64 target=aarch64-apple-darwin os=darwin cpu=arm64 ;;
  *) say "no npm platform package for $(uname -s)-$(uname -m)"; exit 1 ;;
esac

# The native binaries. musl needs its target and, for ring's C code, musl-gcc
# (Debian's musl-tools).
if ! rustup target list --installed | grep -qx "$target"; then
  say "adding the $target target"
  rustup target add "$target"
fi
if [ "$os" = linux ] && ! command -v musl-gcc > /dev/null; then
  say "installing musl-tools (Debian package)"
  apt-get install -y -qq musl-tools > /dev/null 2>&1 || { apt-get update -qq > /dev/null && apt-get install -y -qq musl-tools > /dev/null; }
fi
cargo build --quiet --release --locked --target "$target" -p needs-you
if [ -z "$platform_only" ]; then
  # The Worker's tools (worker-build, wasm-bindgen), skipped once installed.
  bash scripts/setup.sh
  bash scripts/build.sh > /dev/null
fi

stage=dist/npm/stage
rm -rf "$stage" dist/npm/*.tgz
mkdir -p "$stage"

# The main package: the launchers, and the Worker as wrangler deploys it (the
# build's bundle, the page, the migrations, and wrangler.toml without the
# build step, which needs this repository and Rust).
main="$stage/needs-you"
wrangler_version=
if [ -z "$platform_only" ]; then
  cp -r npm/needs-you "$main"
  mkdir -p "$main/worker/build"
  cp build/index.js build/index_bg.wasm "$main/worker/build/"
  cp -r public migrations "$main/worker/"
  awk '/^\[build\]/ { skip = 1; next } /^\[/ { skip = 0 } !skip' wrangler.toml |
    grep -v '^database_id *=' > "$main/worker/wrangler.toml"
  wrangler_version=$(node -p 'require("./node_modules/wrangler/package.json").version')
  cp LICENSE "$main/"
fi

# Versions, stamped from one place: the workspace's, and the wrangler the
# tests ran.
VERSION=$version PLATFORM=$platform OS=$os CPU=$cpu WRANGLER=$wrangler_version MAIN=$main STAGE=$stage node - <<'JS'
const fs = require("node:fs");
const env = process.env;
const source = JSON.parse(fs.readFileSync("npm/needs-you/package.json", "utf8"));
if (env.WRANGLER) {
  const main = { ...source, version: env.VERSION };
  for (const dep of Object.keys(main.optionalDependencies)) main.optionalDependencies[dep] = env.VERSION;
  fs.writeFileSync(`${env.MAIN}/package.json`, JSON.stringify(main, null, 2) + "\n");
  fs.writeFileSync(`${env.MAIN}/worker/deploy.json`, JSON.stringify({ version: env.VERSION, wrangler: env.WRANGLER }, null, 2) + "\n");
}
const platform = {
  name: `@needs-you/${env.PLATFORM}`,
  version: env.VERSION,
  description: `needs-you's native binaries for ${env.PLATFORM}: installed by the needs-you package, not on its own.`,
  license: source.license,
  os: [env.OS],
  cpu: [env.CPU],
  files: ["bin/"],
};
fs.mkdirSync(`${env.STAGE}/platform/bin`, { recursive: true });
fs.writeFileSync(`${env.STAGE}/platform/package.json`, JSON.stringify(platform, null, 2) + "\n");
JS
for bin in needs-you report-prompt; do
  cp "target/$target/release/$bin" "$stage/platform/bin/$bin"
done
cp LICENSE "$stage/platform/"

packages=("./$stage/platform")
[ -n "$platform_only" ] || packages+=("./$main")
npm pack --silent --pack-destination dist/npm "${packages[@]}" > /dev/null
rm -rf "$stage"
ls dist/npm/*.tgz
