#!/usr/bin/env bash
# The memory plan against measured peak RSS on shapes its fixed process baseline
# (`PROCESS_BASELINE`, 24 MiB, crates/srcflow-graph/src/plan/memory.rs) was not set on (that was benches/out_of_core.sh's
# MPO·MPS): the seed's MPO·MPO primitive in both orders, a depth-3 stack, complex64 and another
# MPO·MPS, each in memory and with the lowest host budget of 70, 80 or 90 % of its in-memory plan
# that the planner accepts (environments go to disk). Prints a markdown table for
# benches/README.md.
#
#   benches/plan_vs_rss.sh
#
# Planned: `srcflow plan --json`'s process_peak for the same flags (device and host values plus
# the baseline). Measured: the run's peak_rss_bytes (VmHWM of the whole srcflow process, reading
# the inputs and writing the output included). The allocator is capped at the planned peak: when
# it must unmap cached blocks to stay under it ("released" > 0), the cap held RSS down, so a
# ratio near 1 there says the cap worked, not that the model was right; where nothing was
# released, the ratio is the model's own error.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
WORK="${SRCFLOW_BENCH_DIR:-$REPO/target/bench/plan-vs-rss}"
cargo build --release --quiet
BIN="$REPO/target/release/srcflow"
rm -rf "$WORK" && mkdir -p "$WORK"
field() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }

echo "| case | problem | run options | budget | planned MB | measured peak RSS MB | measured / planned | blocks released |"
echo "|---|---|---|---|---|---|---|---|"
while IFS='|' read -r -u 3 name gen run; do
    problem="$WORK/$name"
    # shellcheck disable=SC2086
    "$BIN" gen $gen "$problem" >/dev/null
    # shellcheck disable=SC2086
    in_memory="$("$BIN" plan "$problem" $run --json | field process_peak)"
    budgeted=none
    for percent in 70 80 90; do
        # shellcheck disable=SC2086
        if "$BIN" plan "$problem" $run --host-memory "$((in_memory * percent / 100))B" \
            --scratch-dir "$WORK" --json >/dev/null 2>&1; then
            budgeted="$((in_memory * percent / 100))B"
            break
        fi
    done
    budgets=(none)
    [ "$budgeted" = none ] || budgets+=("$budgeted")
    for budget in "${budgets[@]}"; do
        flags=()
        [ "$budget" = none ] || flags=(--host-memory "$budget" --scratch-dir "$WORK")
        # shellcheck disable=SC2086
        plan="$("$BIN" plan "$problem" $run "${flags[@]}" --json)"
        planned="$(echo "$plan" | field process_peak)"
        if [ "$budget" != none ] && ! echo "$plan" | python3 -c 'import json,sys; sys.exit(0 if "Disk" in json.load(sys.stdin)["tiers"] else 1)'; then
            echo "$name at $budget: the plan puts no environment on disk" >&2
            exit 1
        fi
        rm -rf "$WORK/out"
        # shellcheck disable=SC2086
        report="$("$BIN" run "$problem" $run "${flags[@]}" --out "$WORK/out" --json)"
        rss="$(echo "$report" | field peak_rss_bytes)"
        released="$(echo "$report" | field blocks_released)"
        python3 -c "import sys; n,g,r,b,p,m,rel=sys.argv[1:]; p,m=float(p),float(m); print(f'| {n} | gen {g} | {r} | {b} | {p/1e6:.1f} | {m/1e6:.1f} | {m/p:.3f} | {rel} |')" \
            "$name" "$gen" "$run" "$budget" "$planned" "$rss" "$released"
    done
done 3<<'CASES'
mpo-wide|identity --sites 20 --mpo-bond 128 --bond 4|--chi-out 256
mpo-narrow|identity --sites 20 --mpo-bond 4 --bond 128|--chi-out 256
depth-3|heisenberg --sites 24 --bond 256 --depth 2|--chi-out 256
complex64|random --sites 24 --bond 256 --mpo-bond 16|--chi-out 256 --dtype complex64
mps-20|random --sites 20 --bond 128 --mpo-bond 8|--chi-out 128
CASES
