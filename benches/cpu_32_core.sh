#!/usr/bin/env bash
# What srcflow would take on a 32-core CPU node like the seed's, by the simulator (issue 19):
# the seed's MPO·MPO primitive at chi = 1000 (a random MPO of bond 1000 acting on a perturbed
# identity MPO of bond 4, chi_out 1000) on 25 and 50 sites, for which the seed publishes 60 s and
# 137 s with src-method on 32 CPU cores. The model, graphs/cpu-32-core.json, is assumed (its notes
# say how it was made: parallel efficiency 0.75 for the GEMM kernels, 0.25 for the QR); the script
# also runs it with lower efficiencies (0.5 and 0.15, written next to the problems) to show how
# much the prediction hangs on them. The node's budgets are given (512 GB of memory, scratch on
# Lustre), not taken from this machine. The problems take 1.0 GB and 2.5 GB of disk under
# target/bench/seed32 (only their headers are read). Prints a markdown table.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
cargo build --release --quiet
BIN="$REPO/target/release/srcflow"
WORK="${SRCFLOW_BENCH_DIR:-$REPO/target/bench/seed32}"
MODEL="$REPO/graphs/cpu-32-core.json"
mkdir -p "$WORK"
LOW="$WORK/cpu-32-core-low-efficiency.json"
python3 - "$MODEL" "$LOW" <<'PY'
import json, sys
model = json.load(open(sys.argv[1]))
for kernel in model["gflops"]:
    model["gflops"][kernel] *= 0.15 / 0.25 if kernel == "qr" else 0.5 / 0.75
model["name"] += ", efficiencies 0.5 (GEMM kernels) and 0.15 (QR)"
json.dump(model, open(sys.argv[2], "w"), indent=2)
PY
seconds() {
    "$BIN" simulate "$1" --chi-out 1000 --model "$2" --host-memory 460GB --disk-space 10TB "${@:3}" --json \
        | python3 -c "import json,sys; d=json.load(sys.stdin); print(f\"{d['wall_s']:.1f} {d['flops'] / 1e12:.2f}\")"
}

echo "| problem | seed (src-method, 32 cores) s | srcflow predicted s | srcflow --no-fold predicted s | at the lower efficiencies s | TFLOP (no fold) |"
echo "|---|---|---|---|---|---|"
for case in "25 60" "50 137"; do
    set -- $case
    problem="$WORK/mpo$1"
    [ -d "$problem" ] || "$BIN" gen identity "$problem" --sites "$1" --mpo-bond 1000 --bond 4 >/dev/null
    read -r folded tflop < <(seconds "$problem" "$MODEL")
    read -r plain plain_tflop < <(seconds "$problem" "$MODEL" --no-fold)
    read -r low _ < <(seconds "$problem" "$LOW")
    echo "| $1 sites, bond 1000 · bond 4, chi_out 1000 | $2 | $folded | $plain | $low | $tflop ($plain_tflop) |"
done
