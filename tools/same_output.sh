#!/usr/bin/env bash
# Are two srcflow binaries' outputs the same? Runs both on small problems of every element type
# and family, with the options that change the path a sweep takes (batches, oversampling with
# a cutoff, a cutoff alone, several devices, out of core, no fold), the same seed each, and
# prints one line per run: `bitwise`, or the relative distance between the two outputs.
#
#   tools/same_output.sh OLD_BINARY [NEW_BINARY]      # NEW defaults to target/release/srcflow
#
# Build OLD from another commit with its own target directory, e.g. as benches/against_commit.sh
# does (target/at-commit/build/release/srcflow after a run of it).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OLD="${1:?usage: tools/same_output.sh OLD_BINARY [NEW_BINARY]}"
NEW="${2:-$REPO/target/release/srcflow}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

problems=(
    "random --sites 12 --bond 32 --mpo-bond 6"
    "ising --sites 10 --bond 16 --depth 3"
    "identity --sites 10 --bond 8 --mpo-bond 8"
    "random --sites 2 --bond 8 --mpo-bond 4"
    "random --sites 10 --bond 16 --mpo-bond 4 --dtype complex64"
    "random --sites 10 --bond 16 --mpo-bond 4 --dtype float64"
    "random --sites 10 --bond 16 --mpo-bond 4 --dtype float32"
)
options=(
    "--chi-out 16"
    "--chi-out 16 --batch-cols 5"
    "--chi-out 12 --oversample 1.5 --cutoff 1e-4"
    "--chi-out 12 --cutoff 1e-3"
    "--chi-out 16 --devices 3 --threads 2"
    "--chi-out 16 --no-fold"
    "--chi-out 16 --host-memory 30MB --device-memory 2MB"
)
for i in "${!problems[@]}"; do
    problem="$WORK/problem-$i"
    # shellcheck disable=SC2086
    "$NEW" gen ${problems[$i]} "$problem" >/dev/null
    for opts in "${options[@]}"; do
        rm -rf "$WORK/old" "$WORK/new"
        # shellcheck disable=SC2086
        "$OLD" run "$problem" $opts --seed 7 --out "$WORK/old" >/dev/null
        # shellcheck disable=SC2086
        "$NEW" run "$problem" $opts --seed 7 --out "$WORK/new" >/dev/null
        if diff -rq "$WORK/old" "$WORK/new" >/dev/null; then
            verdict="bitwise"
        else
            verdict="distance $("$NEW" distance "$WORK/new" "$WORK/old")"
        fi
        echo "$verdict | gen ${problems[$i]} | run $opts"
    done
done
