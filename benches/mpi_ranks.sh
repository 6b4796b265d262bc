#!/usr/bin/env bash
# Ranks against threads (issue 18): the same problem on 1 process × 1 thread, 1 process × 2
# threads (one device, whose kernels use both), 1 process with 2 devices × 1 thread each, and
# 2 MPI ranks × 1 thread (one device each, over loopback), alternated REPS times on this
# shared, noisy machine (the best of each is kept). Prints markdown tables for
# benches/README.md: wall times and parallel efficiency against 1 process × 1 thread, then what
# each kind of exchange moved on rank 0 and its share of the wall time.
# Every run passes --no-fold, as several devices do (benches/multi_device.sh says why).
#
#   benches/mpi_ranks.sh                   # n=24, chi=256, D=32, chi_out=256, REPS=3
#   REPS=5 SITES=16 benches/mpi_ranks.sh
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
REPS="${REPS:-3}" SITES="${SITES:-24}" BOND="${BOND:-256}" MPO="${MPO:-32}" CHI_OUT="${CHI_OUT:-256}"
WORK="${SRCFLOW_BENCH_DIR:-$REPO/target/bench/mpi_ranks}"
tools/mpi_setup.sh
cargo build --release --quiet --features mpi
BIN="$REPO/target/release/srcflow"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rm -rf "$WORK" && mkdir -p "$WORK"
"$BIN" gen random "$WORK/problem" --sites "$SITES" --bond "$BOND" --mpo-bond "$MPO" --seed 1 >/dev/null

# Each configuration: ranks, devices, threads per process.
configs=("1 1 1" "1 1 2" "1 2 2" "2 2 1")
for rep in $(seq "$REPS"); do
    for config in "${configs[@]}"; do
        read -r ranks devices threads <<<"$config"
        rm -rf "$WORK/out"
        launch=()
        [ "$ranks" -gt 1 ] && launch=(mpirun --oversubscribe -np "$ranks")
        "${launch[@]}" "$BIN" run "$WORK/problem" --chi-out "$CHI_OUT" --out "$WORK/out" \
            --devices "$devices" --threads "$threads" --no-fold --json \
            >"$WORK/run-$ranks-$devices-$threads-$rep.json"
    done
done
rm -rf "$WORK/out"

python3 - "$WORK" "$REPS" "$SITES" "$BOND" "$MPO" "$CHI_OUT" <<'PY'
import json, sys
work, reps = sys.argv[1], int(sys.argv[2])
sites, bond, mpo, chi_out = sys.argv[3:7]

def best(ranks, devices, threads):
    runs = [json.load(open(f"{work}/run-{ranks}-{devices}-{threads}-{r}.json"))
            for r in range(1, reps + 1)]
    return min(runs, key=lambda r: r["wall_s"])

one, threads, devices, ranks = best(1, 1, 1), best(1, 1, 2), best(1, 2, 2), best(2, 2, 1)
t1 = one["wall_s"]
print(f"Random MPO·MPS, n={sites}, chi={bond}, D={mpo}, chi_out={chi_out}, no fold; best of "
      f"{reps}, alternated.\n")
print("| configuration | wall s | speed-up over 1 × 1 | parallel efficiency |")
print("|---|---|---|---|")
for name, run, workers in [("1 process × 1 thread", one, 1),
                           ("1 process × 2 threads (one device)", threads, 2),
                           ("1 process, 2 devices × 1 thread", devices, 2),
                           ("2 MPI ranks × 1 thread", ranks, 2)]:
    w = run["wall_s"]
    print(f"| {name} | {w:.2f} | {t1 / w:.2f} | {t1 / (workers * w):.2f} |")
print(f"\n2 ranks against 1 process × 2 threads: {ranks['wall_s'] / threads['wall_s']:.2f} of "
      f"its wall time; against 1 process with 2 devices: "
      f"{ranks['wall_s'] / devices['wall_s']:.2f}.\n")
print("| exchange (rank 0 of 2) | count | bytes | seconds inside | share of wall |")
print("|---|---|---|---|---|")
for use in ranks["network"]:
    print(f"| {use['what']} | {use['count']} | {use['bytes'] / 1e6:.1f} MB | "
          f"{use['seconds']:.3f} | {use['seconds'] / ranks['wall_s']:.1%} |")
PY
