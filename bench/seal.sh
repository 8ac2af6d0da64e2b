#!/usr/bin/env bash
# What sealing a report's words costs the agent's machine, off the hook's
# path, in the detached sender: a short command's permission and a 20 KB
# file's, each beside reading the report alone, in microseconds; and their
# sizes on the wire, in the clear and sealed. Rounds in one process, the
# release build.
#
#   bash bench/seal.sh        # writes bench/results/seal.json
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bench/results
cargo run --quiet --release -p needs-you-reporter --example seal_report | tee /dev/stderr | tail -1 > bench/results/seal.json
