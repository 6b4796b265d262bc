#!/usr/bin/env bash
# Tiny products from Python in a loop: srcflow's warm default session, a new session per call,
# and src-method==0.5.0, alternated in one run (benches/session_overhead.py says what is
# timed). Both sides compute with 2 threads. Prints a markdown table for benches/README.md.
#   benches/session_overhead.sh
#   CALLS=500 SITES="4 20 100" benches/session_overhead.sh
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
PY="$(tools/python_package.sh | tail -1)"
export OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 MKL_NUM_THREADS=2
# shellcheck disable=SC2086
"$PY" benches/session_overhead.py --calls "${CALLS:-100}" --rounds "${ROUNDS:-3}" \
    --sites ${SITES:-4 100}
