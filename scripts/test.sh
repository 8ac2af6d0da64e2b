#!/usr/bin/env bash
# Runs every test: formatting and lints (Rust, JavaScript, Python), the Rust unit and integration tests
# (the reporter's run the built binary against a real HTTP sink), the Worker's
# integration tests in Miniflare (real D1, real Durable Object, real sink, a
# mock push service) and under wrangler dev itself, the page in headless Chromium against Miniflare, the
# needs-you command line (real binaries, real tmux), answers typed into a
# real tmux pane by the real relay,
# the plugins' tests, the packages (cargo package, wrangler deploy --dry-run),
# and the live suite (the real agent CLIs in tmux against a mock model, and
# each CLI's own way of installing our integration). Installs what is missing first (scripts/setup.sh,
# scripts/setup-live.sh).
# Ends with one line counting every test that ran.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$NEEDS_YOU_ROOT"

LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT
step() { printf '\n== %s\n' "$*"; }
run() { "$@" 2>&1 | tee -a "$LOG"; }

bash scripts/setup.sh

step "format and lints"
cargo fmt --all -- --check
python3 scripts/module-cycles.py --self-test
python3 scripts/module-cycles.py src crates/*/src
python3 scripts/module-maps.py src/lib.rs crates/*/src/lib.rs $(find src crates -path '*/src/*' -name mod.rs)
cargo clippy --quiet --all-targets -- -D warnings
cargo clippy --quiet -p needs-you-worker -p needs-you-card --target wasm32-unknown-unknown -- -D warnings
# The crates' docs: every link resolves, none to a private item.
RUSTDOCFLAGS="-D warnings" cargo doc --quiet --no-deps -p needs-you-core -p needs-you-trust -p needs-you-reporter -p needs-you -p needs-you-card
# The JavaScript (page, service worker, plugins, tests, benches) and the
# Python (the Hermes plugin, scripts, test support), at their linters'
# recommended rules: eslint.config.js, ruff.toml.
eslint --max-warnings 0 .
ruff check --quiet .

step "Rust tests (core crate, reporter)"
run cargo test --quiet

step "build the Worker, the release reporter and needs-you"
bash scripts/build.sh > /dev/null
cargo build --quiet --release -p needs-you
# The passkey check as a program, for the page tests' assertions by Chromium.
cargo build --quiet --release -p needs-you-trust --example passkey_check

step "Packages: each publishable crate builds from its own .crate; the Worker deploys (dry run, offline)"
# cargo checks each dependent crate against the .crate files just made through a
# temporary registry, unpacked under $CARGO_HOME/registry/src/-<hash>/ (the hash
# of the checkout's path) and never unpacked again while that folder is there:
# a second run from the same path would build the reporter against an earlier
# commit's core crate. Only our own crates' unpacked copies are removed.
rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/needs-you-*
# cargo also takes a registry crate's build for fresh by its version alone:
# the checks build in a folder of their own, where every build of our crates
# is one of theirs and is dropped first (the other crates' builds are kept).
export CARGO_TARGET_DIR="$NEEDS_YOU_ROOT/target/package-check"
rm -rf "$CARGO_TARGET_DIR"/debug/.fingerprint/needs-you-* "$CARGO_TARGET_DIR"/debug/deps/*needs_you*
# --allow-dirty: a run on a working copy with changes; CI's clone has none.
cargo package --quiet --allow-dirty -p needs-you-core -p needs-you-trust -p needs-you-reporter -p needs-you
cargo publish --dry-run --quiet --allow-dirty -p needs-you-core -p needs-you-trust -p needs-you-reporter -p needs-you
unset CARGO_TARGET_DIR
wrangler deploy --dry-run --outdir "$(mktemp -d)" < /dev/null > /dev/null

step "The npm packages: built, installed without Rust, deploy --dry-run and --local with the real wrangler"
bash scripts/npm-pack.sh > /dev/null
run node --test --test-concurrency=1 tests/npm/

step "Worker integration tests (Miniflare)"
run node --test --test-concurrency=1 tests/worker/

step "The Worker under wrangler dev itself: its proxy, and restarts by TERM and KILL"
run node --test --test-concurrency=1 tests/wrangler/

step "The page in a real browser (Debian's Chromium, Miniflare)"
run node --test --test-concurrency=1 tests/page/

step "The needs-you command line (release binaries, Miniflare, real tmux)"
run node --test --test-concurrency=1 tests/cli/

step "Answers from afar: real tmux, the real reporter and relay, Miniflare, Chromium"
run node --test --test-concurrency=1 tests/answers/

step "OpenCode plugin tests"
run node --test plugins/opencode/test/

step "Hermes plugin tests"
run python3 -m unittest discover -s plugins/hermes/tests -p 'test_*.py' -v

step "The live suite: real agent CLIs in tmux against a mock model"
bash scripts/setup-live.sh
run node --test --test-concurrency=1 tests/live/

# Reached only when every step passed (set -e, pipefail). cargo: "test result:
# ok. N passed; M failed"; node: "# pass N", "# fail M"; unittest: "Ran N tests".
awk '
  /^test result:/ { for (i = 1; i < NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
  /^# pass [0-9]+$/ { p += $3 }
  /^# fail [0-9]+$/ { f += $3 }
  /^Ran [0-9]+ tests? in / { p += $2 }
  END { printf "\n%d passed, %d failed\n", p, f }
' "$LOG"
