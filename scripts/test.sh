#!/usr/bin/env bash
# Runs every test: formatting and lints, the Rust unit and integration tests
# (the reporter's run the built binary against a real HTTP sink), the Worker's
# integration tests in Miniflare (real D1, real Durable Object, real sink),
# and the plugins' tests. Installs what is missing first (scripts/setup.sh).
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$NEEDS_YOU_ROOT"

step() { printf '\n== %s\n' "$*"; }

bash scripts/setup.sh

step "format and lints"
cargo fmt --all -- --check
cargo clippy --quiet --all-targets -- -D warnings
cargo clippy --quiet -p needs-you --target wasm32-unknown-unknown -- -D warnings

step "Rust tests (core crate, reporter)"
cargo test --quiet

step "build the Worker"
bash scripts/build.sh > /dev/null

step "Worker integration tests (Miniflare)"
node --test --test-concurrency=1 tests/worker/

if [ -d plugins/opencode/test ]; then
  step "OpenCode plugin tests"
  cargo build --quiet --release -p report-prompt
  node --test plugins/opencode/test/
fi
if [ -d plugins/hermes/tests ]; then
  step "Hermes plugin tests"
  python3 -m unittest discover -s plugins/hermes/tests -p 'test_*.py' -v
fi
