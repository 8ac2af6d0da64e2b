#!/usr/bin/env bash
# What the agent's machine spends checking one signed answer (the owner's
# ECDSA P-256 signature over its statement, the pin, freshness, the binding
# to the machine's own open), in microseconds, and a passkey's assertion
# over the same statement beside it: rounds of checks in one process, the
# release build.
#
#   bash bench/trust.sh        # writes bench/results/trust.json
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bench/results
cargo run --quiet --release -p needs-you-trust --example trust_check | tee /dev/stderr | tail -1 > bench/results/trust.json
