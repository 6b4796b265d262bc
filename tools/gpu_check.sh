#!/usr/bin/env bash
# On a machine with an NVIDIA GPU, from the binaries tools/gpu_bundle.sh built elsewhere: the
# backend conformance suite on the GPU, the CUDA run against the CPU's, the CPU's and the GPU's
# times on three problems, cuBLAS's GEMM rate, and the seed's MPO·MPO primitive at bond 1000
# (25 and 50 sites, complex128 and complex64, and 50 sites out of core; BENCH=0 skips them), into $OUT (default
# target/gpu-check). Needs the CUDA driver and
# CUDA 12 or 13's cuBLAS, cuSOLVER and NVRTC (system-wide or from Python's nvidia-* wheels).
#   tools/gpu_bundle.sh                # here, with Rust
#   tools/gpu_check.sh                 # there, from the repository root, with target/gpu-bundle
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
BUNDLE="${BUNDLE:-$REPO/target/gpu-bundle}"
OUT="${OUT:-$REPO/target/gpu-check}"
mkdir -p "$OUT"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# CUDA's libraries: Python's nvidia-* wheels, then the system's. cudarc loads them by name; an
# unversioned link to each newest one lets a CUDA 13 machine answer the names CUDA 12 uses.
WHEELS=$(python3 -c '
import glob, site
bases = site.getsitepackages() + [site.getusersitepackages()]
print(":".join(sorted({lib for base in bases for lib in glob.glob(base + "/nvidia/*/lib")})))' 2>/dev/null || true)
export LD_LIBRARY_PATH="$WORK/links:${WHEELS:+$WHEELS:}/usr/local/cuda/lib64:/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
: > "$OUT/libraries.txt"
mkdir -p "$WORK/links"
for name in cuda cublas cublasLt cusolver cusparse nvrtc nvJitLink; do
    found=""
    for dir in ${LD_LIBRARY_PATH//:/ }; do
        candidate=$(ls "$dir"/lib$name.so.[0-9]* 2>/dev/null | sort -V | tail -1 || true)
        if [ -n "$candidate" ]; then found="$candidate"; break; fi
    done
    if [ -n "$found" ]; then ln -sf "$found" "$WORK/links/lib$name.so"; fi
    echo "lib$name: ${found:-not found}" | tee -a "$OUT/libraries.txt"
done
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv || echo "nvidia-smi: not found"; } | tee "$OUT/gpu.txt"

export SRCFLOW_BIN="$BUNDLE/srcflow"
status=0
# The CUDA tests are ignored where they are built (no GPU there): run them all here.
"$BUNDLE/backend_conformance" --include-ignored 2>&1 | tee "$OUT/conformance.txt" || status=1
"$BUNDLE/cuda_backend" --include-ignored 2>&1 | tee "$OUT/cuda_backend.txt" || status=1

# The CPU and the GPU on three problems: wall time and the distance between their outputs.
TABLE="$OUT/agreement.md"
echo "| problem | chi_out | cpu s | cuda s | distance |" > "$TABLE"
echo "|---|---|---|---|---|" >> "$TABLE"
wall() { python3 -c 'import json,sys; print(round(json.load(sys.stdin)["wall_s"], 3))'; }
check() {
    local name="$1" chi="$2"; shift 2
    local cpu cuda distance
    "$SRCFLOW_BIN" gen "$@" "$WORK/$name" >/dev/null || return 1
    cpu=$("$SRCFLOW_BIN" run "$WORK/$name" --chi-out "$chi" --out "$WORK/$name-cpu" --json) || return 1
    cuda=$("$SRCFLOW_BIN" run "$WORK/$name" --chi-out "$chi" --out "$WORK/$name-cuda" --backend cuda \
        --json --trace "$OUT/$name-cuda.json") || return 1
    distance=$("$SRCFLOW_BIN" distance "$WORK/$name-cuda" "$WORK/$name-cpu" | tail -1) || return 1
    echo "| $name: gen $* | $chi | $(wall <<<"$cpu") | $(wall <<<"$cuda") | $distance |" | tee -a "$TABLE"
}
check mps 128 random --sites 30 --bond 128 --mpo-bond 16 || status=1
check mpo-wide 256 identity --sites 25 --mpo-bond 256 --bond 4 || status=1
check mpo-narrow 256 identity --sites 25 --mpo-bond 4 --bond 256 || status=1

# The limit: cuBLAS's GEMM rates on this GPU.
"$BUNDLE/gpu_gemm_rate" | tee "$OUT/gpu_gemm_rate.json" || status=1

# Out of core on the GPU: the problem in $1 again, in complex128, with the most device memory
# under which `srcflow plan` keeps at most half the environments on the device (the rest in host
# memory), or the least it accepts where no budget does; the right-to-left pass's stall share.
out_of_core() {
    local budget report
    budget=$(python3 - "$SRCFLOW_BIN" "$1" <<'PY'
import json, subprocess, sys
def plan(budget):
    args = [sys.argv[1], "plan", sys.argv[2], "--chi-out", "1000", "--backend", "cuda", "--json"]
    run = subprocess.run(args + (["--device-memory", str(budget)] if budget else []),
                         capture_output=True, text=True)
    return json.loads(run.stdout) if run.returncode == 0 else None
def on_device_or_refused(budget):
    planned = plan(budget)
    return planned is None or 2 * planned["tiers"].count("Device") <= len(planned["tiers"])
low, high = 0, plan(None)["profile"]["device"]["bytes"]
while high - low > high // 1000:
    middle = (low + high) // 2
    low, high = (middle, high) if on_device_or_refused(middle) else (low, middle)
print(low if plan(low) else high)
PY
) || return 1
    report=$("$SRCFLOW_BIN" run "$1" --chi-out 1000 --backend cuda --device-memory "$budget" \
        --out "$WORK/out-of-core" --json --trace "$OUT/out-of-core.json") || return 1
    rm -rf "$WORK/out-of-core"
    python3 -c '
import json, sys
report, budget = json.load(sys.stdin), sys.argv[1]
tiers, wall = report["environments"], report["wall_s"]
share = 100 * sum(report["stalls_right_to_left"].values()) / report["right_to_left_s"]
print(f"out of core: --device-memory {budget} B, environments by tier {tiers}, wall {wall:.3f} s,",
      f"right-to-left stall share {share:.1f} %")' "$budget" <<<"$report" | tee "$OUT/out_of_core.txt"
}

# The seed's primitive: a random MPO of bond 1000 on a perturbed identity of bond 4, chi_out 1000.
if [ "${BENCH:-1}" != 0 ]; then
    BENCH_TABLE="$OUT/seed_primitive.md"
    echo "| sites | dtype | wall s | GFLOP/s | % of the GEMM rate |" > "$BENCH_TABLE"
    echo "|---|---|---|---|---|" >> "$BENCH_TABLE"
    for sites in 25 50; do
        "$SRCFLOW_BIN" gen identity --sites "$sites" --mpo-bond 1000 --bond 4 "$WORK/seed-$sites" >/dev/null || status=1
        for dtype in complex128 complex64; do
            report=$("$SRCFLOW_BIN" run "$WORK/seed-$sites" --chi-out 1000 --dtype "$dtype" --backend cuda \
                --out "$WORK/seed-$sites-$dtype" --json --trace "$OUT/seed-$sites-$dtype.json") || { status=1; continue; }
            rm -rf "$WORK/seed-$sites-$dtype"
            echo "$report" | python3 -c '
import json, sys
sites, dtype, limits = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
report = json.load(sys.stdin)
limit = limits.get("zgemm_gflops" if dtype == "complex128" else "cgemm_gflops")
rate, wall = report["gflops_per_s"], report["wall_s"]
share = f"{100 * rate / limit:.0f} %" if limit else "-"
print(f"| {sites} | {dtype} | {wall:.3f} | {rate:.0f} | {share} |")
' "$sites" "$dtype" "$OUT/gpu_gemm_rate.json" | tee -a "$BENCH_TABLE"
        done
        if [ "$sites" = 50 ]; then out_of_core "$WORK/seed-$sites" || status=1; fi
        rm -rf "$WORK/seed-$sites"
    done
fi
exit $status
