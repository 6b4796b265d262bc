#!/usr/bin/env bash
# srcflow against the seed system src-method==0.5.0 (CPU, default settings) and quimb 1.16.0's SRC
# (`tensor_network_1d_compress(method="src")`) on the same problem files and the same chi_out, on
# this machine. Prints a markdown table for benches/README.md.
#
#   benches/vs_src_method.sh            # both cases of issue 2, 3 repetitions each
#   REPS=5 CASES="small" benches/vs_src_method.sh
#   QUIMB=0 CASES="mps30 mps40 mpo-top mpo-bottom" benches/vs_src_method.sh   # issue 42's cases
#
# Cases (random MPO·MPS unless said): small n=30 chi=128 D=16; large n=30 chi=256 D=16;
# mps30 n=30 chi=96 D=16; mps40 n=40 chi=128 D=16; mpo-top and mpo-bottom the seed's MPO·MPO
# primitive on 25 sites (`gen identity`: a random MPO of bond 256 on a perturbed identity MPO of
# bond 4, and the other order), chi_out = chi (256 for the MPO·MPO cases).
#
# Times, two spans on each side, both tools with THREADS threads (default: the logical CPUs;
# srcflow's --threads, the peers' OMP/OpenBLAS/MKL thread counts):
# - whole processes: `srcflow run` from start to exit against `python tools/peer_src_method.py`
#   from start to exit (Python's start, imports, loading the .npy files and writing the output
#   included on that side; reading and writing them on srcflow's);
# - the compression alone: srcflow's `wall_s` (the sweep, without opening the problem, building
#   the graph and planning) against src-method's `src(...)` call (its planning included).
# srcflow also with --no-fold (each site's cores contracted in both kernels, as src-method does);
# quimb's time is its second of two identical calls in one process (the first pays for imports
# and contraction-path searches; QUIMB=0 skips quimb). Best of REPS runs each, alternating the
# tools. Accuracy: the exact product is too costly here (bond D*chi = 2048 and 4096), so each
# output is measured against two chi_out = 2x references, one made by srcflow and one by
# src-method, and srcflow's output against src-method's.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
REPS="${REPS:-3}"
THREADS="${THREADS:-$(nproc)}"
export OMP_NUM_THREADS="$THREADS" OPENBLAS_NUM_THREADS="$THREADS" MKL_NUM_THREADS="$THREADS"
CASES="${CASES:-small large}"
WORK="${SRCFLOW_BENCH_DIR:-$REPO/target/bench/vs-src-method}"
cargo build --release --quiet
BIN="$REPO/target/release/srcflow"
PY="$(tools/peer_venv.sh | tail -1)"
rm -rf "$WORK" && mkdir -p "$WORK"
field() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
best() { python3 -c "import sys; print(min(float(x) for x in sys.argv[1:]))" "$@"; }
# Runs "$@": its stdout in $OUT, its whole-process seconds in $SECONDS_TAKEN.
timed() {
    local t0 t1
    t0="$(date +%s.%N)"
    OUT="$("$@")"
    t1="$(date +%s.%N)"
    SECONDS_TAKEN="$(python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$t0" "$t1")"
}
ZGEMM="$(cargo bench --quiet --bench zgemm_rate 2>/dev/null | tail -1 | field zgemm_gflops)"
# OpenBLAS's zgemm through NumPy (the peers' BLAS), the reference issue 42's targets were set on.
BLAS_ZGEMM="$(cd benches && "$PY" -c "from cpu_limit import numpy_rate; print(round(numpy_rate('complex128'), 2))")"

echo "Threads: $THREADS on each side; best of REPS=$REPS."
echo
echo "| case | srcflow s: process / wall_s | srcflow --no-fold wall_s | src-method s: process / src() call | speed-up: processes / compression | quimb s | vs quimb | srcflow GFLOP (no fold) | srcflow GFLOP/s | % of zgemm: faer's ($ZGEMM GFLOP/s) / OpenBLAS's ($BLAS_ZGEMM) | srcflow error | src-method error | quimb error | errors against | srcflow ↔ src-method | peak RSS MB: srcflow / src-method |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for case in $CASES; do
    case "$case" in
        small) n=30 chi=128 D=16 chi_out=128 ;;
        large) n=30 chi=256 D=16 chi_out=256 ;;
        mps30) n=30 chi=96 D=16 chi_out=96 ;;
        mps40) n=40 chi=128 D=16 chi_out=128 ;;
        mpo-top) kind=identity n=25 chi=4 D=256 chi_out=256 ;;
        mpo-bottom) kind=identity n=25 chi=256 D=4 chi_out=256 ;;
        *) echo "unknown case $case" >&2; exit 2 ;;
    esac
    dir="$WORK/$case"
    mkdir -p "$dir"
    "$BIN" gen "${kind:-random}" "$dir/problem" --sites $n --bond $chi --mpo-bond $D --seed 1 >/dev/null
    kind=
    ours=() unfolded=() theirs=() quimb=() rates=() ours_process=() theirs_process=() rss=() peer_rss=()
    for rep in $(seq "$REPS"); do
        rm -rf "$dir/srcflow" "$dir/peer" "$dir/unfolded"
        timed "$BIN" run "$dir/problem" --chi-out $chi_out --out "$dir/srcflow" --threads "$THREADS" --json
        report="$OUT"
        ours_process+=("$SECONDS_TAKEN")
        ours+=("$(echo "$report" | field wall_s)")
        rates+=("$(echo "$report" | field gflops_per_s)")
        rss+=("$(echo "$report" | field peak_rss_bytes)")
        flops="$(echo "$report" | field flops)"
        plain="$("$BIN" run "$dir/problem" --chi-out $chi_out --out "$dir/unfolded" --no-fold --threads "$THREADS" --json)"
        unfolded+=("$(echo "$plain" | field wall_s)")
        plain_flops="$(echo "$plain" | field flops)"
        timed "$PY" tools/peer_src_method.py "$dir/problem" --chi-out $chi_out --out "$dir/peer" --seed 0
        theirs+=("$(echo "$OUT" | field seconds)")
        peer_rss+=("$(echo "$OUT" | field peak_rss_bytes)")
        theirs_process+=("$SECONDS_TAKEN")
        if [ "${QUIMB:-1}" != 0 ]; then
            rm -rf "$dir/quimb"
            quimb+=("$("$PY" tools/peer_quimb.py "$dir/problem" --chi-out $chi_out --out "$dir/quimb" --seed 0 2>"$dir/quimb.log" | field seconds)") \
                || { echo "quimb failed on $case: see $dir/quimb.log" >&2; exit 1; }
        fi
    done
    t_ours="$(best "${ours[@]}")"
    t_unfolded="$(best "${unfolded[@]}")"
    t_theirs="$(best "${theirs[@]}")"
    p_ours="$(best "${ours_process[@]}")"
    p_theirs="$(best "${theirs_process[@]}")"
    t_quimb=nan e_quimb=nan
    [ "${#quimb[@]}" = 0 ] || t_quimb="$(best "${quimb[@]}")"
    rate="$(python3 -c "import sys; print(max(float(x) for x in sys.argv[1:]))" "${rates[@]}")"
    peak="$(python3 -c "import sys; print(max(int(x) for x in sys.argv[1:]) / 1e6)" "${rss[@]}")"
    peer_peak="$(python3 -c "import sys; print(max(int(x) for x in sys.argv[1:]) / 1e6)" "${peer_rss[@]}")"
    # Two references at 2x chi_out: srcflow's (seed 7) and src-method's (seed 7); errors are
    # given against each, srcflow's first.
    ref_ours="$dir/reference-srcflow" ref_peer="$dir/reference-src-method"
    "$BIN" run "$dir/problem" --chi-out $((2 * chi_out)) --out "$ref_ours" --seed 7 --threads "$THREADS" >/dev/null
    "$PY" tools/peer_src_method.py "$dir/problem" --chi-out $((2 * chi_out)) --out "$ref_peer" --seed 7 >/dev/null
    against_both() {
        local ours peers
        ours="$("$BIN" distance "$1" "$ref_ours")"
        peers="$("$BIN" distance "$1" "$ref_peer")"
        echo "$ours / $peers"
    }
    e_ours="$(against_both "$dir/srcflow")"
    e_theirs="$(against_both "$dir/peer")"
    mutual="$("$BIN" distance "$dir/srcflow" "$dir/peer")"
    if [ "$t_quimb" != nan ]; then e_quimb="$(against_both "$dir/quimb")"; fi
    python3 - "$case" "$n" "$chi" "$D" "$chi_out" "$t_ours" "$p_ours" "$t_unfolded" "$t_theirs" "$p_theirs" "$t_quimb" "$e_quimb" "$flops" "$plain_flops" "$rate" "$ZGEMM" "$BLAS_ZGEMM" "$e_ours" "$e_theirs" "$mutual" "$peak" "$peer_peak" <<'PY'
import sys
(case, n, chi, D, chi_out, ours, p_ours, unfolded, theirs, p_theirs, quimb, e_quimb, flops,
 plain_flops, rate, zgemm, blas_zgemm, e_ours, e_theirs, mutual, peak, peer_peak) = sys.argv[1:]
ours, p_ours, unfolded, theirs, p_theirs, quimb, rate, zgemm, blas_zgemm = map(
    float, (ours, p_ours, unfolded, theirs, p_theirs, quimb, rate, zgemm, blas_zgemm))
flops, plain_flops = float(flops) / 1e9, float(plain_flops) / 1e9
def errors(text):
    return " / ".join("nan" if x.strip() == "nan" else f"{float(x):.4e}" for x in text.split("/"))
print(f"| {case}: n={n}, chi={chi}, D={D}, chi_out={chi_out} | {p_ours:.3f} / {ours:.3f} "
      f"| {unfolded:.3f} | {p_theirs:.3f} / {theirs:.3f} | {p_theirs / p_ours:.2f}x / {theirs / ours:.2f}x "
      f"| {quimb:.3f} | {quimb / ours:.2f}x | {flops:.1f} ({plain_flops:.1f}) "
      f"| {rate:.1f} | {100 * rate / zgemm:.0f} % / {100 * rate / blas_zgemm:.0f} % | {errors(e_ours)} | {errors(e_theirs)} "
      f"| {errors(e_quimb)} | 2x chi_out: srcflow's / src-method's | {float(mutual):.3e} "
      f"| {float(peak):.0f} / {float(peer_peak):.0f} |")
PY
done
