#!/usr/bin/env bash
# The simulator against real runs (issue 6): calibrates a model of this machine, then runs and
# simulates the same problem in three configurations (in memory; environments spilled to disk;
# spilled to a disk throttled to DISK_RATE) with two prefetch policies (none, bandwidth), and
# prints a markdown table of measured and predicted wall times for benches/README.md. These are
# in-sample: `calibrate` fits its kernels on sweeps of the same site shapes (20 sites, D = 16,
# chi 128 and 256). A second table (OUT_OF_SAMPLE=0 skips it) runs shapes it did not fit, in
# memory: the seed's MPO·MPO primitive in both orders (issue 21's case) and MPO·MPS with D = 4.
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

[ "${OUT_OF_SAMPLE:-1}" = 0 ] && exit 0
echo
echo "Out of sample (shapes the calibration did not fit), in memory, default prefetch:"
echo
echo "| problem | run options | measured wall s (best of $REPS) | simulated wall s | simulated / measured |"
echo "|---|---|---|---|---|"
while IFS='|' read -r gen run; do
    problem="$WORK/held-out"
    rm -rf "$problem"
    # shellcheck disable=SC2086
    "$BIN" gen $gen "$problem" >/dev/null
    runs=()
    for rep in $(seq "$REPS"); do
        rm -rf "$WORK/out"
        # shellcheck disable=SC2086
        runs+=("$("$BIN" run "$problem" $run --out "$WORK/out" --json | wall)")
    done
    measured="$(best "${runs[@]}")"
    # shellcheck disable=SC2086
    simulated="$("$BIN" simulate "$problem" $run --model "$WORK/model.json" --json | wall)"
    python3 -c "import sys; m, s = map(float, sys.argv[3:]); print(f'| gen {sys.argv[1]} | {sys.argv[2]} | {m:.2f} | {s:.2f} | {s / m:.2f} |')" \
        "$gen" "$run" "$measured" "$simulated"
done <<'CASES'
identity --sites 20 --mpo-bond 320 --bond 4|--chi-out 320
identity --sites 20 --mpo-bond 4 --bond 320|--chi-out 320
random --sites 30 --bond 128 --mpo-bond 4|--chi-out 128
CASES
