#!/usr/bin/env bash
# Builds srcflow (release) and writes the sparse reference problem (tools/reference_problem.py)
# to DIR unless it is there, then prints DIR: the start of every script that simulates or counts
# the seed's reference run.
#
#   DIR="$(tools/reference_problem.sh [DIR])"    # DIR defaults to target/reference-problem
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$REPO/target/reference-problem}"
(cd "$REPO" && cargo build --release --quiet)
[ -d "$DIR" ] || python3 "$REPO/tools/reference_problem.py" "$DIR" >/dev/null
echo "$DIR"
