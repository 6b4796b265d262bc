#!/usr/bin/env bash
# What `srcflow run --checkpoint` costs: the wall time of the whole process (the problem's
# fingerprint, the checkpoint writes and the removal at the end included) with a checkpoint
# of every site and of every fourth site, against the same run without one, alternating the
# three, on an out-of-core MPO·MPS whose environments spill to disk (issue 44's target: at
# most 1.10) and on the same MPO·MPS and an MPO·MPO in memory (where every environment is
# written for the checkpoint alone). Checks that each output is bitwise the run's without a
# checkpoint. Prints a markdown table: the median of the paired ratios of REPS runs each, of
# the process's wall time and (in brackets) of the sweep's (the report's `wall_s`, which
# leaves out the problem's fingerprint before the sweep and the checkpoint's removal after).
#
# With RANKS=R (R > 1), every run is `mpirun -np R` on R devices (a build with --features
# mpi; tools/mpi_setup.sh installs MPI), each rank keeping its part of the checkpoint; the
# writes column is then rank 0's.
#
#   benches/checkpoint_cost.sh
#   REPS=5 CASES="out-of-core" benches/checkpoint_cost.sh
#   RANKS=2 benches/checkpoint_cost.sh
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
REPS="${REPS:-3}"
CASES="${CASES:-out-of-core in-memory mpo-in-memory}"
WORK="${SRCFLOW_BENCH_DIR:-$REPO/target/bench/checkpoint-cost}"
RANKS="${RANKS:-1}"
LAUNCH=() DEVICES=()
if [ "$RANKS" -gt 1 ]; then
    cargo build --release --quiet --features mpi
    LAUNCH=(mpirun --oversubscribe -np "$RANKS") DEVICES=(--devices "$RANKS")
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
else
    cargo build --release --quiet
fi
BIN="$REPO/target/release/srcflow"
rm -rf "$WORK" && mkdir -p "$WORK"
median() { python3 -c "import statistics,sys; print(f'{statistics.median(float(x) for x in sys.argv[1:]):.3f}')" "$@"; }
# Seconds the command (a run with --json) takes, start to exit, and the sweep's wall_s.
seconds() {
    local start end
    start="$(date +%s.%N)"
    "$@" --json >"$WORK/report.json"
    end="$(date +%s.%N)"
    python3 -c "import json, sys; print(float(sys.argv[2]) - float(sys.argv[1]), json.load(open(sys.argv[3]))['wall_s'])" "$start" "$end" "$WORK/report.json"
}
# The median of the paired ratios of field $1 (1: process, 2: sweep) of runs $2 against runs $3.
paired() {
    python3 -c "
import statistics, sys
field, a, b = int(sys.argv[1]) - 1, sys.argv[2].split(';'), sys.argv[3].split(';')
print(f'{statistics.median(float(x.split()[field]) / float(y.split()[field]) for x, y in zip(a, b)):.3f}')" "$1" "$2" "$3"
}

echo "checkpoint cost, $RANKS rank(s), median of $REPS paired runs (process wall time)."
echo
echo "| case | run options | no checkpoint s | --checkpoint s | ratio (sweep) | --checkpoint-every 4 s | ratio (sweep) | checkpoint writes (extra bytes) | outputs |"
echo "|---|---|---|---|---|---|---|---|---|"
for case in $CASES; do
    case "$case" in
        out-of-core) gen="random --sites 30 --bond 128 --mpo-bond 16"
            opts="--chi-out 128 --host-memory 60MB --device-memory 30MB"
            # Budgets two ranks of one device each fit in (the planner refuses 60MB and 30MB
            # there), with environments still spilling to disk.
            [ "$RANKS" -gt 1 ] && opts="--chi-out 128 --host-memory 90MB --device-memory 25MB" ;;
        in-memory) gen="random --sites 30 --bond 128 --mpo-bond 16"; opts="--chi-out 128" ;;
        mpo-in-memory) gen="identity --sites 16 --mpo-bond 96 --bond 4"; opts="--chi-out 128" ;;
        *) echo "unknown case $case" >&2; exit 2 ;;
    esac
    dir="$WORK/$case"
    mkdir -p "$dir/scratch"
    # shellcheck disable=SC2086
    "$BIN" gen $gen "$dir/problem" --seed 1 >/dev/null
    run() { # OUT [FLAGS...]: one run of the case into $dir/OUT
        local out="$dir/$1"; shift
        rm -rf "$out"
        # shellcheck disable=SC2086
        ${LAUNCH[@]+"${LAUNCH[@]}"} "$BIN" run "$dir/problem" $opts ${DEVICES[@]+"${DEVICES[@]}"} --seed 3 --threads 2 \
            --scratch-dir "$dir/scratch" --out "$out" "$@"
    }
    plain=() every=() sparse=()
    for rep in $(seq "$REPS"); do
        order=(plain every sparse)
        [ $((rep % 2)) = 0 ] && order=(sparse every plain)
        for variant in "${order[@]}"; do
            case "$variant" in
                plain) t_plain="$(seconds run plain)" ;;
                every) t_every="$(seconds run every --checkpoint "$dir/ckpt")" ;;
                sparse) t_sparse="$(seconds run sparse --checkpoint "$dir/ckpt" --checkpoint-every 4)" ;;
            esac
        done
        plain+=("$t_plain") every+=("$t_every") sparse+=("$t_sparse")
    done
    join() { local IFS=';'; echo "$*"; }
    ratios() { echo "$(paired 1 "$(join "$@")" "$(join "${plain[@]}")") ($(paired 2 "$(join "$@")" "$(join "${plain[@]}")"))"; }
    firsts() { for x in "$@"; do echo "${x%% *}"; done; }
    written="$(run every --checkpoint "$dir/ckpt" --json | python3 -c "
import json, sys
c = json.load(sys.stdin)['checkpoint']
print(f\"{c['values_written']} ({c['extra_bytes_written'] / 1e6:.1f} MB)\")")"
    same="bitwise"
    for variant in every sparse; do
        diff -rq "$dir/plain" "$dir/$variant" >/dev/null || same="DIFFER ($variant)"
    done
    # shellcheck disable=SC2046
    echo "| $case | \`$opts\` | $(median $(firsts "${plain[@]}")) | $(median $(firsts "${every[@]}")) | $(ratios "${every[@]}") | $(median $(firsts "${sparse[@]}")) | $(ratios "${sparse[@]}") | $written | $same |"
done
