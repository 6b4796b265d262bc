#!/usr/bin/env bash
# How close srcflow's CPU sweep runs to this machine's GEMM rate, on a matrix of shapes (issue 19).
#
#   benches/cpu_limit.sh                  # the whole matrix, best of REPS=2 runs per case
#   CASES="mps-128-16-128 mpo-wide" THREAD_CASES= benches/cpu_limit.sh    # a subset, no threads table
#
# After the matrix, the threads table runs THREAD_CASES (default: the four largest MPO·MPS and
# MPO·MPO cases) on one thread and on all; THREAD_CASES= (empty) skips it.
# One process after another: faer's GEMM rates (cargo bench --bench zgemm_rate), OpenBLAS's
# through NumPy (the peer venv), then srcflow's sweep on each case with a trace, whose compute
# slices say how long each kernel spent in GEMMs, QR/SVD and copies. Prints a markdown table.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
cargo build --release --quiet
PY="$(tools/peer_venv.sh | tail -1)"
FAER="$(cargo bench --quiet --bench zgemm_rate 2>/dev/null | tail -1)"
exec "$PY" benches/cpu_limit.py --faer "$FAER" --bin "$REPO/target/release/srcflow" \
    --work "${SRCFLOW_BENCH_DIR:-$REPO/target/bench/cpu-limit}" --reps "${REPS:-2}" ${CASES:+--cases $CASES} \
    ${THREAD_CASES+--thread-cases $THREAD_CASES}
