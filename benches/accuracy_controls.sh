#!/usr/bin/env bash
# --cutoff, --oversample and --dtype: srcflow against src-method==0.5.0 on the same problem file,
# errors measured against the exact product and against the truncated SVD (the near-optimal
# reference). Prints two markdown tables for benches/README.md.
#
#   benches/accuracy_controls.sh        # 3 repetitions (best time), seed 0
#   REPS=5 benches/accuracy_controls.sh
#
# Problem: `srcflow gen random --sites 20 --bond 64 --mpo-bond 4 --decay 0.05` (exact bond 256,
# spectra decaying slowly enough that plain SRC sits well above the SVD optimum), chi_out 48.
# Times: srcflow's wall time of `srcflow run`; src-method's time of its `src(...)` call.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
REPS="${REPS:-3}"
WORK="${SRCFLOW_BENCH_DIR:-$REPO/target/bench/accuracy-controls}"
cargo build --release --quiet
BIN="$REPO/target/release/srcflow"
PY="$(tools/peer_venv.sh | tail -1)"
rm -rf "$WORK" && mkdir -p "$WORK"
field() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
bonds() { python3 -c "import json,sys; b=json.load(sys.stdin)['$1']; print(f'{max(b)} / {sum(b)}')"; }
best() { python3 -c "import sys; print(min(float(x) for x in sys.argv[1:]))" "$@"; }
CHI=48
PROBLEM="$WORK/problem"
"$BIN" gen random "$PROBLEM" --sites 20 --bond 64 --mpo-bond 4 --decay 0.05 --seed 1 >/dev/null
"$BIN" svd "$PROBLEM" --chi-out $CHI --out "$WORK/svd" >/dev/null
OPTIMUM="$("$BIN" distance "$WORK/svd" "$PROBLEM")"

echo "Truncated-SVD error at chi_out $CHI: $OPTIMUM"
echo
echo "| options | tool | best s | max / total bond | error | error / SVD optimum |"
echo "|---|---|---|---|---|---|"
for options in "" "--cutoff 1e-3" "--oversample 1.5" "--cutoff 1e-3 --oversample 1.5"; do
    name="${options:-plain}"
    ours=() theirs=()
    for rep in $(seq "$REPS"); do
        rm -rf "$WORK/srcflow" "$WORK/peer"
        report="$("$BIN" run "$PROBLEM" --chi-out $CHI --out "$WORK/srcflow" --seed 0 --json $options)"
        ours+=("$(echo "$report" | field wall_s)")
        peer="$("$PY" tools/peer_src_method.py "$PROBLEM" --chi-out $CHI --out "$WORK/peer" --seed 0 $options)"
        theirs+=("$(echo "$peer" | field seconds)")
    done
    for tool in srcflow src-method; do
        if [ "$tool" = srcflow ]; then
            out="$WORK/srcflow" t="$(best "${ours[@]}")" b="$(echo "$report" | bonds out_bonds)"
        else
            out="$WORK/peer" t="$(best "${theirs[@]}")" b="$(echo "$peer" | bonds bonds)"
        fi
        error="$("$BIN" distance "$out" "$PROBLEM")"
        python3 -c "import sys; n,tool,t,b,e,o=sys.argv[1:]; print(f'| {n} | {tool} | {float(t):.3f} | {b} | {float(e):.3e} | {float(e)/float(o):.2f} |')" \
            "$name" "$tool" "$t" "$b" "$error" "$OPTIMUM"
    done
done

echo
echo "| working type | best s | error | error / SVD optimum | error, exact case (chi_out 256) | planned device peak |"
echo "|---|---|---|---|---|---|"
for dtype in complex128 complex64; do
    input="$WORK/problem-$dtype"
    "$BIN" gen random "$input" --sites 20 --bond 64 --mpo-bond 4 --decay 0.05 --seed 1 --dtype $dtype >/dev/null
    times=()
    for rep in $(seq "$REPS"); do
        rm -rf "$WORK/out-$dtype"
        times+=("$("$BIN" run "$input" --chi-out $CHI --out "$WORK/out-$dtype" --seed 0 --json | field wall_s)")
    done
    error="$("$BIN" distance "$WORK/out-$dtype" "$PROBLEM")"
    "$BIN" run "$input" --chi-out 256 --out "$WORK/exact-$dtype" --seed 0 >/dev/null
    exact="$("$BIN" distance "$WORK/exact-$dtype" "$PROBLEM")"
    peak="$("$BIN" plan "$input" --chi-out $CHI --host-memory 64GB | awk '/^device memory/ {print $4" "$5}')"
    python3 -c "import sys; d,t,e,o,x,p=sys.argv[1:]; print(f'| {d} | {float(t):.3f} | {float(e):.3e} | {float(e)/float(o):.2f} | {float(x):.1e} | {p.strip()} |')" \
        "$dtype" "$(best "${times[@]}")" "$error" "$OPTIMUM" "$exact" "$peak"
done

echo
echo "| working type (n=30, chi=256, D=16, chi_out=256) | best s | GFLOP/s | speed-up |"
echo "|---|---|---|---|"
base=""
for dtype in complex128 complex64; do
    input="$WORK/large-$dtype"
    "$BIN" gen random "$input" --sites 30 --bond 256 --mpo-bond 16 --seed 1 --dtype $dtype >/dev/null
    times=() rates=()
    for rep in $(seq "$REPS"); do
        rm -rf "$WORK/large-out"
        report="$("$BIN" run "$input" --chi-out 256 --out "$WORK/large-out" --seed 0 --json)"
        times+=("$(echo "$report" | field wall_s)")
        rates+=("$(echo "$report" | field gflops_per_s)")
    done
    t="$(best "${times[@]}")"
    base="${base:-$t}"
    python3 -c "import sys; d,t,r,b=sys.argv[1:]; print(f'| {d} | {float(t):.2f} | {float(r):.1f} | {float(b)/float(t):.2f}x |')" \
        "$dtype" "$t" "$(python3 -c "import sys; print(max(float(x) for x in sys.argv[1:]))" "${rates[@]}")" "$base"
done
