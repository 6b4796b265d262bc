#!/usr/bin/env bash
# src-method's own quench benchmark (`bench_depth.py evolve` from its 0.5.0 sdist on PyPI: a
# bond-2 Trotter-step MPO applied k steps per sweep, from |0…0>, reference at a larger bond)
# run unchanged with src-method's `src` and with srcflow's swapped in (benches/evolve_with.py),
# on the CPU, both with 2 threads. Prints each side's table and one comparing them: seconds,
# srcflow's speed-up, and the infidelity of each against its own reference.
#   benches/evolve.sh                                   # n = 20 and 50, χ = 32, 64, 128, k = 1, 2, 4
#   SITES="20" CHIS="32 64" STEPS=40 benches/evolve.sh
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
PY="$(tools/python_package.sh | tail -1)"
WORK="${SRCFLOW_BENCH_DIR:-$REPO/target/bench/evolve}"
mkdir -p "$WORK"
SCRIPT="$WORK/src_method-0.5.0/benches/stack/bench_depth.py"
if [ ! -f "$SCRIPT" ]; then
    "$PY" -m pip download --quiet --disable-pip-version-check --no-deps --no-binary :all: \
        'src-method==0.5.0' -d "$WORK" >&2
    tar -xzf "$WORK/src_method-0.5.0.tar.gz" -C "$WORK"
fi
# What bench_depth.py imports besides src-method (scipy comes with quimb).
"$PY" -c 'import cyclopts' 2>/dev/null ||
    "$PY" -m pip install --quiet --disable-pip-version-check 'cyclopts==4.*' >&2
export OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 MKL_NUM_THREADS=2
STEPS="${STEPS:-40}"
REFERENCE="${REFERENCE_CHI:-256}"
for n in ${SITES:-20 50}; do
    chis=()
    for chi in ${CHIS:-32 64 128}; do chis+=(--chis "$chi"); done
    for side in src-method srcflow; do
        "$PY" benches/evolve_with.py "$side" "$SCRIPT" evolve --n-sites "$n" --steps "$STEPS" \
            --device cpu --quimb-max-chi 0 --reference-chi "$REFERENCE" "${chis[@]}" \
            --steps-per-sweep 1 --steps-per-sweep 2 --steps-per-sweep 4 \
            --output "$WORK/$side-$n.md" >&2
    done
done
"$PY" - "$WORK" ${SITES:-20 50} <<'PY'
import sys
from pathlib import Path

work, sizes = Path(sys.argv[1]), sys.argv[2:]

def rows(path):
    lines = path.read_text().splitlines()[2:]
    return {(c[0], c[1], c[2].split()[-1]): c for c in ([x.strip() for x in l.strip("|").split("|")] for l in lines)}

print("| n | χ | k | src-method s | srcflow s | speed-up | infidelity src-method | infidelity srcflow | ratio |")
print("|---|---|---|---|---|---|---|---|---|")
for n in sizes:
    peer, ours = rows(work / f"src-method-{n}.md"), rows(work / f"srcflow-{n}.md")
    for key, p in peer.items():
        o = ours[key]
        ps, os_, pi, oi = float(p[3]), float(o[3]), float(p[4]), float(o[4])
        print(f"| {key[0]} | {key[1]} | {key[2]} | {ps:.3g} | {os_:.3g} | {ps / os_:.2f}× | {pi:.3g} | {oi:.3g} | {oi / pi:.2f} |")
PY
