#!/usr/bin/env bash
# The work of the seed's reference run as srcflow's graph counts it: writes the reference stack
# (N·V·M·U, 50 sites, M of bond 4000, sparse files, almost no disk) with
# tools/reference_problem.py, builds the sweep graph srcflow would run on one A100-64GB budget
# (57 GB device, 470 GB host, fetch on demand) and prints its flops per kernel and in all.
#
#   tools/reference_flops.sh [DIR]       # DIR defaults to target/reference-problem
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
DIR="$(tools/reference_problem.sh "${1:-}")"
target/release/srcflow graph "$DIR" --chi-out 2000 --device-memory 57GB --host-memory 470GB \
    --disk-space 20TB --prefetch none --format json | python3 -c '
import json, sys
from collections import defaultdict
graph = json.load(sys.stdin)
flops = defaultdict(float)
for task in graph["graph"]["nodes"]:
    op = task["op"] if isinstance(task["op"], str) else next(iter(task["op"]))
    flops[op] += task["flops"]
for op, f in sorted(flops.items()):
    print(f"{op:10s} {f / 1e15:10.2f} PFLOP")
total = sum(flops.values()) / 1e15
print(f"total      {total:10.2f} PFLOP")
'
