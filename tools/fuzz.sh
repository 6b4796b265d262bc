#!/usr/bin/env bash
# Fuzzes every reader (.npy headers and payloads, manifest.json, machine models, command-line
# sizes, rates, policies and faults, graph JSON) with random and mutated input, then the whole
# command line (every subcommand with flag values at their types' extremes, run in-process on a
# small problem), then checkpoints (random edits of a killed run's journal and value files,
# each resumed: the uninterrupted run's output or a refusal, nothing outside touched), for a
# bounded time; prints how many inputs each target tried. Fails on the first panic or wrong
# output, with its input. It builds the `fuzz` profile (release with overflow checks and
# debug assertions, so an overflow panics instead of wrapping).
#
#   tools/fuzz.sh                      # 100000 inputs per target, at most 30 minutes
#   CASES=5000 LIMIT=120 tools/fuzz.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cases="${CASES:-100000}" limit="${LIMIT:-1800}"
cargo build --profile fuzz --tests --quiet
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
SRCFLOW_FUZZ_CASES="$cases" timeout "$limit" bash -c '
    cargo test --profile fuzz --quiet --test fuzz_readers -- --nocapture --test-threads 1 &&
    cargo test --profile fuzz --quiet --bin srcflow command_line_fuzz -- --nocapture --test-threads 1 &&
    cargo test --profile fuzz --quiet --test fuzz_checkpoint -- --nocapture' \
    >"$log" 2>&1 || status=$?
grep -oE "fuzz target .*|.*panicked.*|minimal failing input.*" "$log" || true
[ "$status" -eq 124 ] && echo "stopped after $limit s"
exit "$status"
