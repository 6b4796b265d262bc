#!/usr/bin/env bash
# A run's GEMMs and factorizations against the same shapes alone (issue 42, item 2): each case
# runs `srcflow run --trace`, `srcflow report --json` sums its primitives by shape, and
# `cargo bench --bench kernel_rates_in_run` times each shape alone on the CPU backend, with its
# operands in cache and with the caches flushed. Prints one markdown table per case, then what
# the sweep's rate would be with every shape's kernels at their rates alone, against faer's
# zgemm rate measured in the same run (benches/zgemm_rate.rs).
#
#   benches/kernel_rates_in_run.sh                        # the four cases below, 2 threads
#   CASES="mps30 mpo-top" THREADS=1 benches/kernel_rates_in_run.sh
#
# Cases: mps30 (30 sites, bond 96, MPO bond 16, chi_out 96), mps40 (40 sites, bond 128, MPO
# bond 16, chi_out 128), and the seed's MPO·MPO primitive on 25 sites in both orders (mpo-top:
# the bond-256 MPO on top; mpo-bottom: the other order), chi_out 256.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
THREADS="${THREADS:-2}"
CASES="${CASES:-mps30 mps40 mpo-top mpo-bottom}"
WORK="${SRCFLOW_BENCH_DIR:-$REPO/target/bench/kernel-rates-in-run}"
cargo build --release --quiet
cargo bench --quiet --bench kernel_rates_in_run --no-run 2>/dev/null
ZGEMM="$(cargo bench --quiet --bench zgemm_rate -- "$THREADS" 2>/dev/null | tail -1 |
    python3 -c "import json, sys; print(json.load(sys.stdin)['zgemm_gflops'])")"
BIN="$REPO/target/release/srcflow"
rm -rf "$WORK" && mkdir -p "$WORK"
for case in $CASES; do
    case "$case" in
        mps30) gen="random --sites 30 --bond 96 --mpo-bond 16"; chi=96 ;;
        mps40) gen="random --sites 40 --bond 128 --mpo-bond 16"; chi=128 ;;
        mpo-top) gen="identity --sites 25 --mpo-bond 256 --bond 4"; chi=256 ;;
        mpo-bottom) gen="identity --sites 25 --mpo-bond 4 --bond 256"; chi=256 ;;
        *) echo "unknown case $case" >&2; exit 2 ;;
    esac
    dir="$WORK/$case"
    mkdir -p "$dir"
    # shellcheck disable=SC2086
    "$BIN" gen $gen "$dir/problem" --seed 1 >/dev/null
    "$BIN" run "$dir/problem" --chi-out "$chi" --threads "$THREADS" --out "$dir/out" \
        --trace "$dir/trace.json" --json > "$dir/run.json"
    "$BIN" report --json "$dir/trace.json" > "$dir/report.json"
    echo
    echo "$case: gen $gen, --chi-out $chi, $THREADS threads"
    echo
    cargo bench --quiet --bench kernel_rates_in_run -- "$dir/report.json" "$THREADS" \
        "$dir/run.json" "$ZGEMM" 2>/dev/null
done
