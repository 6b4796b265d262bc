#!/usr/bin/env bash
# A product whose environments do not fit in this machine's memory: a random MPO·MPS of SITES
# sites (default 620), bond 128, MPO bond 64, at χ̄ 512, whose environments (about 67 MB a
# site, complex128) go through the disk tier, 36 GB and more, with a host budget of HOST
# (default 4GiB) and --direct-io. Then the same product and seed with twice the host budget,
# for the bits; the disk's raw O_DIRECT bandwidth (dd, 4 GiB, 8 MiB blocks); a model of this
# machine from `srcflow calibrate` (its disk measured under the same scratch folder) and the
# run as `simulate` predicts it. Prints a markdown table for benches/README.md. About 20
# minutes on the 2-core VM; needs about 45 GB free under SRCFLOW_BENCH_DIR (scratch, and one
# output at a time: each output is hashed and removed).
#
#   benches/beyond_memory.sh
#   SITES=60 HOST=1GiB benches/beyond_memory.sh      # a small rehearsal
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
WORK="${SRCFLOW_BENCH_DIR:-$REPO/target/bench/beyond-memory}"
SITES="${SITES:-620}"
HOST="${HOST:-4GiB}"
cargo build --release --quiet
BIN="$REPO/target/release/srcflow"
rm -rf "$WORK" && mkdir -p "$WORK/scratch"
"$BIN" gen random --sites "$SITES" --bond 128 --mpo-bond 64 "$WORK/problem" >/dev/null
TWICE=$(python3 -c "import sys; n=sys.argv[1]; i=len(n.rstrip('GgMmKkIiBb')); print(str(2*float(n[:i])).rstrip('0').rstrip('.')+n[i:])" "$HOST")
FLAGS=(--chi-out 512 --direct-io --scratch-dir "$WORK/scratch")

# The disk's raw O_DIRECT bandwidth, under the scratch folder.
raw() { dd "$@" bs=8M 2>&1 | tail -1 | sed -E 's/.*, ([0-9.]+ [GM]B\/s)$/\1/'; }
RAW_WRITE=$(raw if=/dev/zero of="$WORK/scratch/raw.bin" count=512 oflag=direct)
RAW_READ=$(raw if="$WORK/scratch/raw.bin" of=/dev/null iflag=direct)
rm -f "$WORK/scratch/raw.bin"

"$BIN" calibrate --out "$WORK/machine.json" --scratch-dir "$WORK/scratch" >/dev/null
"$BIN" simulate "$WORK/problem" "${FLAGS[@]}" --host-memory "$HOST" --model "$WORK/machine.json" \
    --json > "$WORK/simulated.json"

# Runs with host budget $1 into run-$1.json; prints the sha256 of its output and removes it.
run() {
    "$BIN" run "$WORK/problem" "${FLAGS[@]}" --host-memory "$1" --out "$WORK/out" --json \
        > "$WORK/run-$1.json"
    (cd "$WORK/out" && find . -type f | sort | xargs sha256sum | sha256sum | cut -c1-16)
    rm -rf "$WORK/out"
}
HASH=$(run "$HOST")
HASH_TWICE=$(run "$TWICE")

ENVS=$("$BIN" plan "$WORK/problem" "${FLAGS[@]}" --host-memory "$HOST" --json \
    | python3 -c "import json,sys; print(f'{sum(json.load(sys.stdin)[\"env_bytes\"]) / 1e9:.2f}')")
RAM=$(awk '/MemTotal/ {printf "%.2f", $2 * 1024 / 1e9}' /proc/meminfo)
echo "Environments in all: $ENVS GB (srcflow plan --json, env_bytes); this machine's memory: $RAM GB."
echo "Raw O_DIRECT under $WORK/scratch (dd, 4 GiB in 8 MiB blocks, one request at a time): write $RAW_WRITE, read $RAW_READ."
python3 -c "import json,sys; print('srcflow calibrate, same folder:', [n for n in json.load(open(sys.argv[1]))['notes'] if n.startswith('disk:')][0])" "$WORK/machine.json"
echo
python3 - "$WORK" "$HOST" "$TWICE" "$HASH" "$HASH_TWICE" <<'PY'
import json, sys
work, host, twice, hash_, hash_twice = sys.argv[1:]
units = {"k": 2**10, "m": 2**20, "g": 2**30}
def budget(text):
    number = text.rstrip("GgMmKkIiBb")
    return float(number) * units[text[len(number)].lower()]
sim = json.load(open(f"{work}/simulated.json"))
print("| host budget | written to disk GB | wall s | right-to-left s | its environment stalls s | peak RSS GB (÷ budget) | disk-write GB/s (over the pass) | disk-read GB/s (over the pass) | simulated wall s (÷ run) | output sha256 |")
print("|---|---|---|---|---|---|---|---|---|---|")
for name, digest in ((host, hash_), (twice, hash_twice)):
    r = json.load(open(f"{work}/run-{name}.json"))
    lane = {(l["lane"], l["pass"]): l for l in r["lanes"]}
    def rate(key, pass_s):
        l = lane.get(key)
        return "-" if l is None else f"{l['bytes_per_s'] / 1e9:.2f} ({l['bytes'] / pass_s / 1e9:.2f})"
    rtl, ltr = r["right_to_left_s"], r["left_to_right_s"]
    env = r["stalls_right_to_left"]["environments_s"]
    rss = r["peak_rss_bytes"]
    simulated = f"{sim['wall_s']:.1f} ({sim['wall_s'] / r['wall_s']:.3f}×)" if name == host else "-"
    print(f"| {name} | {r['written_to_disk_bytes'] / 1e9:.2f} | {r['wall_s']:.1f} | {rtl:.1f} "
          f"| {env:.2f} ({100 * env / rtl:.1f} %) | {rss / 1e9:.2f} ({rss / budget(name):.3f}) "
          f"| {rate(('disk-write', 'left-to-right'), ltr)} | {rate(('disk-read', 'right-to-left'), rtl)} "
          f"| {simulated} | {digest} |")
print()
print("Outputs bitwise the same:", "yes" if hash_ == hash_twice else "NO")
PY
