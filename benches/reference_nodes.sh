#!/usr/bin/env bash
# The seed's reference run (N·V·M·U, 50 sites, M of bond 4000, chi_out 2000, complex128) on 1, 2,
# 4 and 8 Leonardo Booster nodes (4 A100-64GB each, one rank per node), predicted by
# `srcflow simulate --ranks` on graphs/leonardo-a100.json (assumed rates: see its notes; the
# network is 200 Gb/s per node). Budgets: 57 GB of device memory per GPU and 470 GB of host
# memory per node (budgets are the whole run's, so the host budget grows with the nodes).
# Each row is also simulated as the same GPUs in one process, whose wall time is what the
# network costs nothing.
#
#   benches/reference_nodes.sh [DIR]    # DIR: where the sparse reference problem is written
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
DIR="$(tools/reference_problem.sh "${1:-}")"

simulate() { # NODES RANKS: the JSON report of the reference run on NODES nodes as RANKS ranks
    target/release/srcflow simulate "$DIR" --chi-out 2000 --model graphs/leonardo-a100.json \
        --device-memory 57GB --host-memory "$((470 * $1))GB" --disk-space 20TB \
        --devices "$((4 * $1))" --ranks "$2" --json
}

OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
echo "| nodes | GPUs | predicted wall s | speed-up | parallel efficiency | same GPUs in one process, wall s | cost of crossing nodes | rank 0 receiving s | bytes crossing nodes (each value once) | QR s (GPU 0) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for nodes in 1 2 4 8; do
    simulate "$nodes" "$nodes" > "$OUT/ranked.json"
    simulate "$nodes" 1 > "$OUT/together.json"
    [ "$nodes" = 1 ] && cp "$OUT/ranked.json" "$OUT/one.json"
    python3 - "$nodes" "$OUT" <<'EOF'
import json, sys
nodes, out = int(sys.argv[1]), sys.argv[2]
read = lambda name: json.load(open(f"{out}/{name}.json"))
one, ranked, together = read("one")["wall_s"], read("ranked"), read("together")
wall, alone = ranked["wall_s"], together["wall_s"]
network = ranked.get("network", [])
receiving = sum(u["seconds"] for u in network)
crossing = sum(u["bytes"] for u in network) / 1e9
qr = ranked["devices"][0]["qr_s"]
print(f"| {nodes} | {4 * nodes} | {wall:.0f} | {one / wall:.2f} | {one / (nodes * wall):.2f} "
      f"| {alone:.0f} | {100 * (wall / alone - 1):.1f} % | {receiving:.1f} | {crossing:.0f} GB | {qr:.0f} |")
EOF
done
