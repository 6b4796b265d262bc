#!/usr/bin/env bash
# This tree's srcflow against a binary built from another commit, in one run on this machine:
# wall time of `srcflow run` on MPO·MPS and MPO·MPO shapes (the MPO·MPO in both orders) and
# on an out-of-core MPO·MPS (environments on device, host and disk), and on two devices of one
# thread each (the split that MPI ranks run, benches/mpi_ranks.sh), alternating the
# two binaries, and whether their outputs are bitwise equal (or how far apart: `srcflow distance`). Prints a markdown table.
#
#   benches/against_commit.sh                 # against HEAD (the commit before uncommitted work)
#   benches/against_commit.sh HEAD~1          # against any commit
#   REPS=5 CASES="mps-small mpo-wide" benches/against_commit.sh HEAD~1
#   CASES="mps-one-thread mps-two-threads mps-devices" benches/against_commit.sh HEAD~1
#       # not in the default cases: the two-device problem on one device of one thread
#       # (mpi_ranks.sh's baseline) and of two threads
#
# The other commit is checked out in a worktree under target/ and built with a target directory
# of its own (the first build compiles every dependency again: minutes). A ratio above 1 means
# this tree is slower: the ratio of the best of REPS runs each, and the median of the REPS
# ratios of runs made back to back (which of the two goes first alternates), the steadier one
# on this noisy machine.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
REV="${1:-HEAD}"
REPS="${REPS:-3}"
CASES="${CASES:-mps-small mps-large mpo-wide mpo-narrow out-of-core mps-devices}"
WORK="${SRCFLOW_BENCH_DIR:-$REPO/target/bench/against-commit}"
COMMIT="$(git rev-parse --verify "$REV^{commit}")"
cargo build --release --quiet
NEW="$REPO/target/release/srcflow"
TREE="$REPO/target/at-commit/tree"
git worktree remove --force "$TREE" 2>/dev/null || rm -rf "$TREE"
git worktree prune
git worktree add --detach --quiet "$TREE" "$COMMIT"
trap 'git worktree remove --force "$TREE" 2>/dev/null || true' EXIT
cargo build --release --quiet --manifest-path "$TREE/Cargo.toml" --target-dir "$REPO/target/at-commit/build"
OLD="$REPO/target/at-commit/build/release/srcflow"
rm -rf "$WORK" && mkdir -p "$WORK"
field() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
best() { python3 -c "import sys; print(min(float(x) for x in sys.argv[1:]))" "$@"; }
# "bitwise", or the relative distance ‖new − old‖ / ‖old‖ of the two products.
same() {
    if diff -rq "$1" "$2" >/dev/null; then
        echo "bitwise"
    else
        printf 'differ by %.1e' "$("$NEW" distance "$1" "$2")"
    fi
}

echo "Against ${COMMIT:0:10} ($(git log -1 --format=%s "$COMMIT" | cut -c1-60)…), best of $REPS."
echo
echo "| case | problem | run options | this tree s | ${COMMIT:0:7} s | ratio of bests | median of paired ratios | outputs |"
echo "|---|---|---|---|---|---|---|---|"
for case in $CASES; do
    case "$case" in
        mps-small) gen="random --sites 30 --bond 128 --mpo-bond 16"; opts="--chi-out 128" ;;
        mps-large) gen="random --sites 30 --bond 256 --mpo-bond 16"; opts="--chi-out 256" ;;
        mpo-wide) gen="identity --sites 16 --mpo-bond 96 --bond 4"; opts="--chi-out 128" ;;
        mpo-narrow) gen="identity --sites 16 --mpo-bond 4 --bond 96"; opts="--chi-out 128" ;;
        out-of-core) gen="random --sites 30 --bond 128 --mpo-bond 16"
            opts="--chi-out 128 --host-memory 95MB --device-memory 30MB" ;;
        mps-devices) gen="random --sites 24 --bond 256 --mpo-bond 32"
            opts="--chi-out 256 --devices 2 --threads 1 --no-fold" ;;
        mps-one-thread) gen="random --sites 24 --bond 256 --mpo-bond 32"
            opts="--chi-out 256 --devices 1 --threads 1 --no-fold" ;;
        mps-two-threads) gen="random --sites 24 --bond 256 --mpo-bond 32"
            opts="--chi-out 256 --devices 1 --threads 2 --no-fold" ;;
        *) echo "unknown case $case" >&2; exit 2 ;;
    esac
    dir="$WORK/$case"
    mkdir -p "$dir"
    # shellcheck disable=SC2086
    "$NEW" gen $gen "$dir/problem" --seed 1 >/dev/null
    new=() old=()
    for rep in $(seq "$REPS"); do
        rm -rf "$dir/new" "$dir/old"
        # shellcheck disable=SC2086
        time_new() { new+=("$("$NEW" run "$dir/problem" $opts --seed 3 --out "$dir/new" --json | field wall_s)"); }
        # shellcheck disable=SC2086
        time_old() { old+=("$("$OLD" run "$dir/problem" $opts --seed 3 --out "$dir/old" --json | field wall_s)"); }
        if [ $((rep % 2)) = 1 ]; then time_new; time_old; else time_old; time_new; fi
    done
    t_new="$(best "${new[@]}")"
    t_old="$(best "${old[@]}")"
    ratio="$(python3 -c "print(f'{$t_new / $t_old:.3f}')")"
    paired="$(python3 -c "
import statistics, sys
new, old = sys.argv[1].split(), sys.argv[2].split()
print(f'{statistics.median(float(n) / float(o) for n, o in zip(new, old)):.3f}')" "${new[*]}" "${old[*]}")"
    printf '| %s | gen %s | %s | %.3f | %.3f | %s | %s | %s |\n' "$case" "$gen" "$opts" "$t_new" "$t_old" \
        "$ratio" "$paired" "$(same "$dir/new" "$dir/old")"
done
