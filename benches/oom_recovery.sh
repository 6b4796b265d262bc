#!/usr/bin/env bash
# Recovery overhead of the memory governor (issue 4): the same run without faults and with a
# fraction RATE of device allocations failing (--inject-oom), alternated REPS times; best wall
# time of each. Overhead = (faulted wall - clean wall) / clean compute time, both from the same
# session. Also prints the governor's own accounting (failed attempts and releases) from the
# faulted run's report. Prints a markdown table row for benches/README.md.
#
#   benches/oom_recovery.sh                    # n=30, chi=128, D=16, chi_out=128, 5 %, REPS=3
#   RATE=0.2 REPS=5 benches/oom_recovery.sh
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
REPS="${REPS:-3}" RATE="${RATE:-0.05}"
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
clean = min(load("clean"), key=lambda r: r["wall_s"])
faulted = min(load("faulted"), key=lambda r: r["wall_s"])
m = faulted["memory"]
overhead = (faulted["wall_s"] - clean["wall_s"]) / clean["compute_busy_s"]
print("| fault rate | clean wall s | faulted wall s | overhead, % of compute | injected failures "
      "| rewrites | governor recovery s | half-batch compute s |")
print("|---|---|---|---|---|---|---|---|")
print(f"| {rate:.0%} | {clean['wall_s']:.3f} | {faulted['wall_s']:.3f} | {100 * overhead:.1f} "
      f"| {m['injected']} | {m['rewrites']} | {m['recovery_s']:.4f} | {m['half_batch_s']:.3f} |")
PY
