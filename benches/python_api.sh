#!/usr/bin/env bash
# The Python package (`srcflow.src`) against `srcflow run` and against src-method==0.5.0 on the
# same problems in one run (benches/python_api.py says what is timed). Prints a markdown table
# for benches/README.md.
#   benches/python_api.sh                     # both cases, best of 3
#   REPS=5 CASES="large" benches/python_api.sh
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
cargo build --release --quiet
PY="$(tools/python_package.sh | tail -1)"
WORK="${SRCFLOW_BENCH_DIR:-$REPO/target/bench/python-api}"
rm -rf "$WORK"
# shellcheck disable=SC2086
"$PY" benches/python_api.py --bin target/release/srcflow --work "$WORK" \
    --reps "${REPS:-3}" --cases ${CASES:-small large}
