#!/usr/bin/env bash
# The seed's reference run (N·V·M·U, 50 sites, M of bond 4000, chi_out 2000, complex128) on one
# and on four A100-64GB of a node, predicted by the simulator on graphs/leonardo-a100.json
# (assumed rates: see its notes), for each prefetch policy, with the seed's budgets: 57 GB of
# device memory per GPU (64 GB less 10 %), 470 GB of host memory for the node. A policy whose
# plan does not fit prints the planner's refusal.
#
#   benches/reference_run.sh [DIR]      # DIR: where the sparse reference problem is written
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
DIR="$(tools/reference_problem.sh "${1:-}")"
BUDGETS="--device-memory 57GB --host-memory 470GB --disk-space 20TB"
echo "| GPUs | prefetch | predicted wall s | compute busy s (all GPUs) | waiting for environments s | input cores s | device bytes peak (all GPUs) |"
echo "|---|---|---|---|---|---|---|"
for devices in 1 4; do
for policy in none lookahead:1 bandwidth; do
    if ! report="$(target/release/srcflow simulate "$DIR" --chi-out 2000 --model graphs/leonardo-a100.json \
            $BUDGETS --prefetch "$policy" --devices "$devices" --json 2>&1)"; then
        echo "| $devices | $policy | does not fit: ${report#srcflow: error: } | | | | |"
        continue
    fi
    echo "$report" | python3 -c '
import json, sys
r = json.load(sys.stdin)
env = r["stalls_left_to_right"]["environments_s"] + r["stalls_right_to_left"]["environments_s"]
cores = r["stalls_left_to_right"]["input_cores_s"] + r["stalls_right_to_left"]["input_cores_s"]
wall, busy, peak = r["wall_s"], r["compute_busy_s"], r["peak_bytes"]["device"] / 1e9
print(f"| {sys.argv[2]} | {sys.argv[1]} | {wall:.0f} | {busy:.0f} | {env:.1f} | {cores:.1f} | {peak:.1f} GB |")
' "$policy" "$devices"
done
done
