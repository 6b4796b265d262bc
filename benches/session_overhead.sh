#!/usr/bin/env bash
# Tiny products from Python in a loop: srcflow's warm default session, a new session per call,
# and src-method==0.5.0, alternated in one run (benches/session_overhead.py says what is
# timed). Both sides compute with 2 threads. Prints a markdown table for benches/README.md.
#   benches/session_overhead.sh
#   CALLS=500 SITES="4 20 100" benches/session_overhead.sh
#   AGAINST=HEAD~1 benches/session_overhead.sh   # also the package of another commit, its table
#       after this tree's, ROUNDS runs of each alternated (the other commit is built as a wheel
#       in a worktree under target/at-commit-python: minutes)
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
PY="$(tools/python_package.sh | tail -1)"
export OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 MKL_NUM_THREADS=2
table() { # PYTHONPATH ROUNDS: the script's table with the package first on PYTHONPATH
    # shellcheck disable=SC2086
    PYTHONPATH="$1" "$PY" benches/session_overhead.py --calls "${CALLS:-100}" --rounds "$2" \
        --sites ${SITES:-4 100}
}
if [ -z "${AGAINST:-}" ]; then
    table "" "${ROUNDS:-3}"
    exit 0
fi
COMMIT="$(git rev-parse --verify "$AGAINST^{commit}")"
WORK="$REPO/target/at-commit-python"
TREE="$WORK/tree"
git worktree remove --force "$TREE" 2>/dev/null || rm -rf "$TREE"
git worktree prune
git worktree add --detach --quiet "$TREE" "$COMMIT"
trap 'git worktree remove --force "$TREE" 2>/dev/null || true' EXIT
rm -rf "$WORK/wheel" "$WORK/package"
(cd "$TREE/python" && CARGO_TARGET_DIR="$WORK/build" "$(dirname "$PY")/maturin" build --release \
    --quiet -i "$PY" -o "$WORK/wheel" >&2)
"$PY" -m zipfile -e "$WORK"/wheel/*.whl "$WORK/package"
for round in $(seq "${ROUNDS:-3}"); do
    echo "Round $round, this tree:"
    table "" 1
    echo "Round $round, ${COMMIT:0:10}:"
    table "$WORK/package" 1
done
