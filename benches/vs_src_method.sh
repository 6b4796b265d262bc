#!/usr/bin/env bash
# srcflow against the seed system src-method==0.5.0 (CPU, default settings) and quimb 1.16.0's SRC
# (`tensor_network_1d_compress(method="src")`) on the same problem files and the same chi_out, on
# this machine. Prints a markdown table for benches/README.md.
#
#   benches/vs_src_method.sh            # both cases of issue 2, 3 repetitions each
#   REPS=5 CASES="small" benches/vs_src_method.sh
#
# Times: srcflow's wall time of `srcflow run` (reading inputs and writing outputs included), by
# default and with --no-fold (each site's cores contracted in both kernels, as src-method does);
# src-method's time of its `src(...)` call only (loading with NumPy excluded); quimb's of the second
# of two identical calls in one process (the first pays for imports and contraction-path
# searches; QUIMB=0 skips quimb). Best of REPS runs each, alternating the tools. Accuracy: the exact product is too costly here (bond D*chi = 2048 and
# 4096: its QR-sweep distance alone takes ~9 min for the small case), so each output is measured
# against a chi_out = 2x reference run of srcflow, and srcflow's output against src-method's.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
REPS="${REPS:-3}"
CASES="${CASES:-small large}"
WORK="${SRCFLOW_BENCH_DIR:-$REPO/target/bench/vs-src-method}"
cargo build --release --quiet
BIN="$REPO/target/release/srcflow"
PY="$(tools/peer_venv.sh | tail -1)"
rm -rf "$WORK" && mkdir -p "$WORK"
field() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
best() { python3 -c "import sys; print(min(float(x) for x in sys.argv[1:]))" "$@"; }
ZGEMM="$(cargo bench --quiet --bench zgemm_rate 2>/dev/null | tail -1 | field zgemm_gflops)"

echo "| case | srcflow s | srcflow --no-fold s | src-method s | speed-up | quimb s | vs quimb | srcflow GFLOP (no fold) | srcflow GFLOP/s | % of zgemm ($ZGEMM GFLOP/s) | srcflow error | src-method error | quimb error | error vs | srcflow ↔ src-method |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for case in $CASES; do
    case "$case" in
        small) n=30 chi=128 D=16 chi_out=128 ;;
        large) n=30 chi=256 D=16 chi_out=256 ;;
        *) echo "unknown case $case" >&2; exit 2 ;;
    esac
    dir="$WORK/$case"
    mkdir -p "$dir"
    "$BIN" gen random "$dir/problem" --sites $n --bond $chi --mpo-bond $D --seed 1 >/dev/null
    ours=() unfolded=() theirs=() quimb=() rates=()
    for rep in $(seq "$REPS"); do
        rm -rf "$dir/srcflow" "$dir/peer" "$dir/unfolded"
        report="$("$BIN" run "$dir/problem" --chi-out $chi_out --out "$dir/srcflow" --json)"
        ours+=("$(echo "$report" | field wall_s)")
        rates+=("$(echo "$report" | field gflops_per_s)")
        flops="$(echo "$report" | field flops)"
        plain="$("$BIN" run "$dir/problem" --chi-out $chi_out --out "$dir/unfolded" --no-fold --json)"
        unfolded+=("$(echo "$plain" | field wall_s)")
        plain_flops="$(echo "$plain" | field flops)"
        theirs+=("$("$PY" tools/peer_src_method.py "$dir/problem" --chi-out $chi_out --out "$dir/peer" --seed 0 | field seconds)")
        if [ "${QUIMB:-1}" != 0 ]; then
            rm -rf "$dir/quimb"
            quimb+=("$("$PY" tools/peer_quimb.py "$dir/problem" --chi-out $chi_out --out "$dir/quimb" --seed 0 2>"$dir/quimb.log" | field seconds)") \
                || { echo "quimb failed on $case: see $dir/quimb.log" >&2; exit 1; }
        fi
    done
    t_ours="$(best "${ours[@]}")"
    t_unfolded="$(best "${unfolded[@]}")"
    t_theirs="$(best "${theirs[@]}")"
    t_quimb=nan e_quimb=nan
    [ "${#quimb[@]}" = 0 ] || t_quimb="$(best "${quimb[@]}")"
    rate="$(python3 -c "import sys; print(max(float(x) for x in sys.argv[1:]))" "${rates[@]}")"
    against="chi_out $((2 * chi_out)) run"
    reference="$dir/reference"
    "$BIN" run "$dir/problem" --chi-out $((2 * chi_out)) --out "$reference" --seed 7 >/dev/null
    e_ours="$("$BIN" distance "$dir/srcflow" "$reference")"
    e_theirs="$("$BIN" distance "$dir/peer" "$reference")"
    mutual="$("$BIN" distance "$dir/srcflow" "$dir/peer")"
    if [ "$t_quimb" != nan ]; then e_quimb="$("$BIN" distance "$dir/quimb" "$reference")"; fi
    python3 - "$case" "$n" "$chi" "$D" "$chi_out" "$t_ours" "$t_unfolded" "$t_theirs" "$t_quimb" "$e_quimb" "$flops" "$plain_flops" "$rate" "$ZGEMM" "$e_ours" "$e_theirs" "$against" "$mutual" <<'PY'
import sys
(case, n, chi, D, chi_out, ours, unfolded, theirs, quimb, e_quimb, flops, plain_flops, rate, zgemm,
 e_ours, e_theirs, against, mutual) = sys.argv[1:]
ours, unfolded, theirs, quimb, rate, zgemm = map(float, (ours, unfolded, theirs, quimb, rate, zgemm))
flops, plain_flops = float(flops) / 1e9, float(plain_flops) / 1e9
print(f"| {case}: n={n}, chi={chi}, D={D}, chi_out={chi_out} | {ours:.3f} | {unfolded:.3f} | {theirs:.3f} "
      f"| {theirs / ours:.2f}x | {quimb:.3f} | {quimb / ours:.2f}x | {flops:.1f} ({plain_flops:.1f}) "
      f"| {rate:.1f} | {100 * rate / zgemm:.0f} % | {float(e_ours):.4e} | {float(e_theirs):.4e} "
      f"| {float(e_quimb):.4e} | {against} | {float(mutual):.3e} |")
PY
done
