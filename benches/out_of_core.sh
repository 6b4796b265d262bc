#!/usr/bin/env bash
# Out-of-core benchmark (issue 3): stalls, overlap under a throttled disk, peak RSS against the
# plan, and src-method 0.5.0 with the same host budget. Prints markdown for benches/README.md.
#
#   benches/out_of_core.sh                       # n=50, chi=256, D=16, chi_out=256, REPS=2
#   REPS=3 SITES=20 BOND=128 CHI_OUT=128 benches/out_of_core.sh
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
WORK="${SRCFLOW_BENCH_DIR:-$REPO/target/bench/out-of-core}"
cargo build --release --quiet
PY="$(tools/peer_venv.sh | tail -1)"
rm -rf "$WORK" && mkdir -p "$WORK"
python3 benches/out_of_core.py "$REPO/target/release/srcflow" "$PY" "$WORK"
