#!/usr/bin/env bash
# Recovery overhead of the memory governor (issue 4): the same run without faults and with a
# fraction RATE of device allocations failing (--inject-oom, a new seed each time), in REPS
# back-to-back pairs. Overhead of a pair = (faulted wall - clean wall) / clean compute time; the
# median over the pairs is reported (a shared machine's noise hits single runs, not medians of
# pairs). Also prints the governor's own accounting (failed attempts, releases, re-planning,
# rewrites) and the time spent in half-batch nodes, medians over the faulted runs. Prints a
# markdown table row for benches/README.md.
#
#   benches/oom_recovery.sh                    # n=30, chi=128, D=16, chi_out=128, 5 %, REPS=7
#   RATE=0.2 REPS=5 benches/oom_recovery.sh
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
REPS="${REPS:-7}" RATE="${RATE:-0.05}"
SITES="${SITES:-30}" BOND="${BOND:-128}" MPO="${MPO:-16}" CHI_OUT="${CHI_OUT:-128}"
WORK="${SRCFLOW_BENCH_DIR:-$REPO/target/bench/oom-recovery}"
cargo build --release --quiet
BIN="$REPO/target/release/srcflow"
rm -rf "$WORK" && mkdir -p "$WORK"
"$BIN" gen random "$WORK/problem" --sites "$SITES" --bond "$BOND" --mpo-bond "$MPO" --seed 1 >/dev/null
for rep in $(seq "$REPS"); do
    for mode in clean faulted; do
        extra=()
        [ "$mode" = faulted ] && extra=(--inject-oom "$RATE:$rep")
        rm -rf "$WORK/out"
        "$BIN" run "$WORK/problem" --chi-out "$CHI_OUT" --out "$WORK/out" --json "${extra[@]}" \
            >"$WORK/$mode-$rep.json"
    done
done
python3 - "$WORK" "$REPS" "$RATE" <<'PY'
import json, sys
work, reps, rate = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
load = lambda mode: [json.load(open(f"{work}/{mode}-{r}.json")) for r in range(1, reps + 1)]
from statistics import median
clean, faulted = load("clean"), load("faulted")
overhead = median((f["wall_s"] - c["wall_s"]) / c["compute_busy_s"] for c, f in zip(clean, faulted))
mid = lambda runs, key: median(r[key] for r in runs)
memory = lambda key: median(f["memory"][key] for f in faulted)
print("| fault rate | pairs | clean wall s | faulted wall s | overhead, % of compute "
      "| injected failures | rewrites | governor recovery s | half-batch compute s |")
print("|---|---|---|---|---|---|---|---|---|")
print(f"| {rate:.0%} | {reps} | {mid(clean, 'wall_s'):.3f} | {mid(faulted, 'wall_s'):.3f} "
      f"| {100 * overhead:.1f} | {memory('injected'):.0f} | {memory('rewrites'):.0f} "
      f"| {memory('recovery_s'):.4f} | {memory('half_batch_s'):.3f} |")
PY
