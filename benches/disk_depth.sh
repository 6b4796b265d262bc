#!/usr/bin/env bash
# Depth against an emulated parallel filesystem: an MPO·MPS whose 22 oldest environments
# (150 MB) go to disk, run with one request in flight per transfer and with the default depth,
# on `--disk-emulate` (EMULATE, default 10ms,25MB/s,125MB/s: one request moves 25 MB/s, five
# together its total), and `simulate`d with a model `srcflow calibrate` measures of this
# machine and of that emulated filesystem (`--disk-only --disk-emulate`). Prints the local
# disk's and the emulated filesystem's calibration, then a markdown table for benches/README.md.
#
#   benches/disk_depth.sh
#   EMULATE=20ms,10MiB/s,40MiB/s benches/disk_depth.sh
#
# What to look for: at depth 1 the right-to-left pass waits for environments; at the default
# depth its environment stalls stay within 5 % of the pass; the simulator predicts both runs'
# wall time and right-to-left pass; the outputs are bitwise the same.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
WORK="${SRCFLOW_BENCH_DIR:-$REPO/target/bench/disk-depth}"
EMULATE="${EMULATE:-10ms,25MB/s,125MB/s}"
cargo build --release --quiet
BIN="$REPO/target/release/srcflow"
rm -rf "$WORK" && mkdir -p "$WORK/scratch"
BUDGETS=(--chi-out 512 --host-memory 150MB --device-memory 80MB --scratch-dir "$WORK/scratch")
"$BIN" gen random --sites 40 --bond 64 --mpo-bond 16 "$WORK/problem" >/dev/null

"$BIN" calibrate --out "$WORK/machine.json" --scratch-dir "$WORK/scratch" >/dev/null
"$BIN" calibrate --disk-only --model "$WORK/machine.json" --disk-emulate "$EMULATE" \
    --scratch-dir "$WORK/scratch" --out "$WORK/emulated.json" >/dev/null
notes() { python3 -c "import json,sys; m=json.load(open(sys.argv[1])); r=m['disk_requests']; print('latency %.2f ms, one request %.1f MB/s, all %.1f MB/s' % (r['latency_s']*1e3, r['stream_bytes_per_s']/1e6, r['total_bytes_per_s']/1e6)); print([n for n in m['notes'] if n.startswith('disk:')][0])" "$1"; }
echo "Local disk under $WORK/scratch: $(notes "$WORK/machine.json")"
echo
echo "Emulated $EMULATE: $(notes "$WORK/emulated.json")"
echo

# One line of the table from a report (--json) of a run and of its simulation.
row() {
    python3 - "$@" <<'PY'
import json, sys
depth, run_path, sim_path, same = sys.argv[1:]
run, sim = (json.load(open(p)) for p in (run_path, sim_path))
def cols(r):
    rtl = r["right_to_left_s"]
    env = r["stalls_right_to_left"]["environments_s"]
    read = next(l for l in r["lanes"] if l["lane"] == "disk-read")
    return rtl, env, read["bytes_per_s"] / 1e6, r["wall_s"]
(rtl, env, rate, wall), (srtl, senv, srate, swall) = cols(run), cols(sim)
print(f"| {depth} | {wall:.2f} | {rtl:.2f} | {env:.2f} ({100 * env / rtl:.1f} %) | {rate:.1f} "
      f"| {swall:.2f} ({swall / wall:.3f}×) | {srtl:.2f} ({srtl / rtl:.3f}×) "
      f"| {senv:.2f} ({100 * senv / srtl:.1f} %) | {same} |")
PY
}

echo "| depth | wall s | right-to-left s | its environment stalls s | disk reads MB/s | simulated wall s (÷ run) | simulated right-to-left s (÷ run) | simulated stalls s | output |"
echo "|---|---|---|---|---|---|---|---|---|"
for depth in 1 8; do
    "$BIN" run "$WORK/problem" "${BUDGETS[@]}" --out "$WORK/out-$depth" --io-depth "$depth" \
        --disk-emulate "$EMULATE" --json > "$WORK/run-$depth.json"
    "$BIN" simulate "$WORK/problem" "${BUDGETS[@]}" --io-depth "$depth" \
        --model "$WORK/emulated.json" --json > "$WORK/sim-$depth.json"
    same="-"
    if [ "$depth" != 1 ]; then
        same=$(diff -rq "$WORK/out-1" "$WORK/out-$depth" >/dev/null && echo "bitwise as depth 1" || echo "DIFFERS")
    fi
    row "$depth" "$WORK/run-$depth.json" "$WORK/sim-$depth.json" "$same"
done
