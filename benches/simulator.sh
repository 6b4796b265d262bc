#!/usr/bin/env bash
# The simulator against real runs (issue 21). Calibrates a model of this machine first (its grid
# of problems is not among those below), then runs and simulates a matrix of shapes: MPO·MPS
# with chi 64 to 256 and MPO bonds 4 to 32, the seed's MPO·MPO primitive in both orders, and a
# depth-3 stack; each in memory and out of core (the smallest host budget the planner accepts,
# plus a tenth, so environments go to disk), on one and on two devices. Prints a markdown table
# of measured and simulated wall times and the largest and median errors against the targets
# (15 % and 10 %). Then refines the model with the traces of three of those runs
# (`calibrate --from-trace`) and predicts a fourth, different run with both models.
#
#   benches/simulator.sh            # REPS=2: each measurement the best of two runs
#   REPS=3 benches/simulator.sh
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
REPS="${REPS:-2}"
WORK="${SRCFLOW_BENCH_DIR:-$REPO/target/bench/simulator}"
cargo build --release --quiet
BIN="$REPO/target/release/srcflow"
rm -rf "$WORK" && mkdir -p "$WORK/scratch" "$WORK/traces"
"$BIN" calibrate --out "$WORK/model.json" --scratch-dir "$WORK/scratch" >/dev/null
times() { python3 -c "import json,sys; r = json.load(sys.stdin); print(r['wall_s'], r['compute_busy_s'])"; }

# The smallest host budget (in bytes, plus a tenth) at which the plan of `$@` moves
# environments off the device; the plan's own peak when none fits lower.
out_of_core_budget() {
    python3 - "$BIN" "$@" <<'EOF'
import json, subprocess, sys
bin, args = sys.argv[1], sys.argv[2:]
def plan(extra):
    p = subprocess.run([bin, "plan", *args, *extra, "--json"], capture_output=True, text=True)
    return json.loads(p.stdout) if p.returncode == 0 else None
peak = plan([])["process_peak"]
for tenth in range(2, 11):
    budget = peak * tenth // 10
    p = plan(["--host-memory", f"{budget}B"])
    if p and any(t != "Device" for t in p["tiers"]):
        print(budget * 11 // 10)
        break
else:
    print(peak)
EOF
}

# Measures (best of REPS) and simulates one configuration; prints a table row (wall times, and
# the compute lanes' busy time, which sets the task model apart from the schedule) and records
# the ratio of wall times. Keeps the last rep's trace as $WORK/traces/$name.json.
ratios=()
measure() {
    local name="$1" problem="$2"
    shift 2
    local runs=()
    for _ in $(seq "$REPS"); do
        rm -rf "$WORK/out"
        runs+=("$("$BIN" run "$problem" "$@" --scratch-dir "$WORK/scratch" --out "$WORK/out" \
            --trace "$WORK/traces/$name.json" --json | times)")
    done
    local measured simulated
    measured="$(python3 -c "import sys; print(min(sys.argv[1:], key=lambda r: float(r.split()[0])))" "${runs[@]}")"
    simulated="$("$BIN" simulate "$problem" "$@" --scratch-dir "$WORK/scratch" \
        --model "${MODEL:-$WORK/model.json}" --json | times)"
    # shellcheck disable=SC2086
    set -- "$name" $measured $simulated
    ratios+=("$(python3 -c "import sys; print(float(sys.argv[2]) / float(sys.argv[1]))" "$2" "$4")")
    python3 -c "import sys; m, mb, s, sb = map(float, sys.argv[2:]); print(f'| {sys.argv[1]} | {m:.2f} | {s:.2f} | {s / m:.3f} | {sb / mb:.2f} |')" "$@"
}

echo "| problem · memory · devices | measured wall s (best of $REPS) | simulated wall s | simulated / measured | compute busy, simulated / measured |"
echo "|---|---|---|---|---|"
while IFS='|' read -r name gen run; do
    problem="$WORK/$name"
    # shellcheck disable=SC2086
    "$BIN" gen $gen "$problem" >/dev/null
    for devices in 1 2; do
        # shellcheck disable=SC2086
        measure "$name · in memory · $devices" "$problem" $run --devices "$devices"
        # shellcheck disable=SC2086
        budget="$(out_of_core_budget "$problem" $run --devices "$devices")"
        # shellcheck disable=SC2086
        measure "$name · out of core · $devices" "$problem" $run --devices "$devices" --host-memory "${budget}B"
    done
done <<'CASES'
MPO·MPS chi 64 D 4|random --sites 100 --bond 64 --mpo-bond 4|--chi-out 64
MPO·MPS chi 128 D 32|random --sites 30 --bond 128 --mpo-bond 32|--chi-out 128
MPO·MPS chi 256 D 4|random --sites 30 --bond 256 --mpo-bond 4|--chi-out 256
MPO·MPS chi 256 D 16|random --sites 30 --bond 256 --mpo-bond 16|--chi-out 256
MPO·MPO 320 on 4|identity --sites 20 --mpo-bond 320 --bond 4|--chi-out 320
MPO·MPO 4 on 320|identity --sites 20 --mpo-bond 4 --bond 320|--chi-out 320
depth 3 chi 128|ising --sites 30 --depth 3 --bond 128|--chi-out 128
CASES
echo
python3 - "${ratios[@]}" <<'EOF'
import statistics, sys
errors = [abs(float(r) - 1) for r in sys.argv[1:]]
largest, median = max(errors), statistics.median(errors)
verdict = lambda e, target: "meets" if e <= target else "misses"
within = sum(e <= 0.15 for e in errors)
print(f"largest error {largest:.1%} ({verdict(largest, 0.15)} the 15 % target), "
      f"median {median:.1%} ({verdict(median, 0.10)} the 10 % target); "
      f"{within} of {len(errors)} runs within 15 %")
EOF

echo
echo "Refinement: the model refined with the traces of three runs above, on a fourth run:"
"$BIN" calibrate --model "$WORK/model.json" --out "$WORK/refined.json" \
    --from-trace "$WORK/traces/MPO·MPS chi 128 D 32 · in memory · 1.json" \
    --from-trace "$WORK/traces/MPO·MPO 320 on 4 · in memory · 1.json" \
    --from-trace "$WORK/traces/depth 3 chi 128 · in memory · 1.json" >/dev/null
fourth="$WORK/fourth"
"$BIN" gen random "$fourth" --sites 40 --bond 192 --mpo-bond 8 >/dev/null
echo
runs=()
for _ in $(seq "$REPS"); do
    rm -rf "$WORK/out"
    runs+=("$("$BIN" run "$fourth" --chi-out 192 --scratch-dir "$WORK/scratch" --out "$WORK/out" --json | times)")
done
measured="$(python3 -c "import sys; print(min(sys.argv[1:], key=lambda r: float(r.split()[0])))" "${runs[@]}")"
echo "Measured once (best of $REPS): $measured (wall s, compute busy s); both models simulate that run."
echo
echo "| model | simulated wall s | error | compute busy, simulated / measured |"
echo "|---|---|---|---|"
for model in model refined; do
    simulated="$("$BIN" simulate "$fourth" --chi-out 192 --scratch-dir "$WORK/scratch" \
        --model "$WORK/$model.json" --json | times)"
    # shellcheck disable=SC2086
    python3 -c "import sys; m, mb, s, sb = map(float, sys.argv[2:]); print(f'| {sys.argv[1]} | {s:.3f} | {abs(s / m - 1):.1%} | {sb / mb:.2f} |')" "$model" $measured $simulated
done
