#!/usr/bin/env bash
# Strong scaling over devices (issue 5): the same problem on 1 device × 1 thread, 1 device ×
# 2 threads and 2 devices × 1 thread each, alternated REPS times (this machine is shared and
# noisy; the best of each is kept). Prints markdown tables for benches/README.md: wall times
# and parallel efficiency, then what each of the two devices did (QR and collective time,
# idle time), then the efficiency on 4 and 8 devices predicted from those shares.
# Every run passes --no-fold: several devices do not fold a site's cores into S (each would
# compute the whole W), so the scaling compares one algorithm; one device with its default
# fold is faster than the 1-device rows here (see benches/README.md, issue 2).
#
#   benches/multi_device.sh                   # n=24, chi=256, D=32, chi_out=256, REPS=3
#   REPS=5 SITES=20 benches/multi_device.sh
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
REPS="${REPS:-3}" SITES="${SITES:-24}" BOND="${BOND:-256}" MPO="${MPO:-32}" CHI_OUT="${CHI_OUT:-256}"
WORK="${SRCFLOW_BENCH_DIR:-$REPO/target/bench/multi_device}"
cargo build --release --quiet
BIN="$REPO/target/release/srcflow"
rm -rf "$WORK" && mkdir -p "$WORK"
"$BIN" gen random "$WORK/problem" --sites "$SITES" --bond "$BOND" --mpo-bond "$MPO" --seed 1 >/dev/null

configs=("1 1" "1 2" "2 2")
for rep in $(seq "$REPS"); do
    for config in "${configs[@]}"; do
        read -r devices threads <<<"$config"
        rm -rf "$WORK/out"
        "$BIN" run "$WORK/problem" --chi-out "$CHI_OUT" --out "$WORK/out" \
            --devices "$devices" --threads "$threads" --no-fold --json \
            >"$WORK/run-$devices-$threads-$rep.json"
    done
done
rm -rf "$WORK/out"

python3 - "$WORK" "$REPS" "$SITES" "$BOND" "$MPO" "$CHI_OUT" <<'EOF'
import json, sys
work, reps = sys.argv[1], int(sys.argv[2])
sites, bond, mpo, chi_out = sys.argv[3:7]

def best(devices, threads):
    runs = [json.load(open(f"{work}/run-{devices}-{threads}-{r}.json")) for r in range(1, reps + 1)]
    return min(runs, key=lambda r: r["wall_s"])

one, two_threads, two = best(1, 1), best(1, 2), best(2, 2)
t1, t12, t2 = one["wall_s"], two_threads["wall_s"], two["wall_s"]
per_site = t1 / int(sites)
print(f"Random MPO·MPS, n={sites}, chi={bond}, D={mpo}, chi_out={chi_out}; best of {reps}, "
      f"alternated; one site takes {per_site:.2f} s on 1 device × 1 thread.\n")
print("| configuration | wall s | speed-up over 1 × 1 | parallel efficiency |")
print("|---|---|---|---|")
for name, run, workers in [("1 device × 1 thread", one, 1), ("1 device × 2 threads", two_threads, 2),
                           ("2 devices × 1 thread", two, 2)]:
    w = run["wall_s"]
    print(f"| {name} | {w:.2f} | {t1 / w:.2f} | {t1 / (workers * w):.2f} |")
print(f"\n2 devices against 1 device × 2 threads: {t2 / t12:.2f} of its wall time.\n")

print("| device (2 devices × 1 thread) | compute s | QR s | collective s | idle s | QR share | collective share | idle share |")
print("|---|---|---|---|---|---|---|---|")
for d in two["devices"]:
    print(f"| {d['device']} | {d['compute_busy_s']:.2f} | {d['qr_s']:.2f} | {d['collective_s']:.2f} | "
          f"{d['idle_s']:.2f} | {d['qr_s'] / t2:.1%} | {d['collective_s'] / t2:.1%} | {d['idle_s'] / t2:.1%} |")

# Prediction: the QR runs on one device while the others wait, and every device all-gathers S
# each site (its collective time), both on the chain from one site to the next; the rest
# (env, sketch, project) divides among the devices. T(N) = serial + parallel / N, with the
# parallel work taken from the 2-device run (which includes its memory contention).
devices = two["devices"]
qr = devices[0]["qr_s"]
collective = max(d["collective_s"] for d in devices)
parallel = sum(d["compute_busy_s"] for d in devices) - qr
print("\n| devices | predicted wall s | predicted efficiency |")
print("|---|---|---|")
predicted = {n: qr + (collective if n > 1 else 0.0) + parallel / n for n in (1, 2, 4, 8)}
for n, wall in predicted.items():
    print(f"| {n} | {wall:.2f} | {predicted[1] / (n * wall):.2f} |")
EOF
