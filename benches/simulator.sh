#!/usr/bin/env bash
# The simulator against real runs (issue 6): calibrates a model of this machine, then runs and
# simulates the same problem in three configurations (in memory; environments spilled to disk;
# spilled to a disk throttled to DISK_RATE) with two prefetch policies (none, bandwidth), and
# prints a markdown table of measured and predicted wall times for benches/README.md.
#
#   benches/simulator.sh                     # n=30, chi=256, D=16, chi_out=256, REPS=2
#   REPS=3 HOST=270MB DISK_RATE=40MB/s benches/simulator.sh
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
REPS="${REPS:-2}" HOST="${HOST:-270MB}" DISK_RATE="${DISK_RATE:-40MB/s}"
SITES="${SITES:-30}" BOND="${BOND:-256}" MPO="${MPO:-16}" CHI_OUT="${CHI_OUT:-256}"
WORK="${SRCFLOW_BENCH_DIR:-$REPO/target/bench/simulator}"
cargo build --release --quiet
BIN="$REPO/target/release/srcflow"
rm -rf "$WORK" && mkdir -p "$WORK/scratch"
"$BIN" calibrate --out "$WORK/model.json" --scratch-dir "$WORK/scratch" >/dev/null
"$BIN" gen random "$WORK/problem" --sites "$SITES" --bond "$BOND" --mpo-bond "$MPO" --seed 1 >/dev/null
wall() { python3 -c "import json,sys; print(json.load(sys.stdin)['wall_s'])"; }
best() { python3 -c "import sys; print(min(float(x) for x in sys.argv[1:]))" "$@"; }

echo "| configuration | prefetch | measured wall s (best of $REPS) | simulated wall s | simulated / measured |"
echo "|---|---|---|---|---|"
for config in memory disk throttled; do
    case "$config" in
        memory) flags=() ;;
        disk) flags=(--host-memory "$HOST") ;;
        throttled) flags=(--host-memory "$HOST" --disk-bandwidth "$DISK_RATE") ;;
    esac
    for policy in none bandwidth; do
        common=("$WORK/problem" --chi-out "$CHI_OUT" --prefetch "$policy" --scratch-dir "$WORK/scratch" "${flags[@]}")
        runs=()
        for rep in $(seq "$REPS"); do
            rm -rf "$WORK/out"
            runs+=("$("$BIN" run "${common[@]}" --out "$WORK/out" --json | wall)")
        done
        measured="$(best "${runs[@]}")"
        simulated="$("$BIN" simulate "${common[@]}" --model "$WORK/model.json" --json | wall)"
        python3 -c "import sys; m, s = map(float, sys.argv[3:]); print(f'| {sys.argv[1]} | {sys.argv[2]} | {m:.2f} | {s:.2f} | {s / m:.2f} |')" \
            "$config" "$policy" "$measured" "$simulated"
    done
done
