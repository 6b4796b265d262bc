#!/usr/bin/env python3
"""The matrix of benches/cpu_limit.sh: GEMM rates of NumPy (OpenBLAS) next to faer's, then
srcflow's sweep on each case, as a markdown table.

Each case: `srcflow gen` writes the problem, `srcflow run --json --trace` runs it REPS times
(the fastest run is kept), `srcflow report --json` sums its trace per kernel. Columns:
- GFLOP: the graph's counted flops; sweep GFLOP/s: those over the two passes' wall time;
- % of GEMM: that rate over the best GEMM rate of the run's element type measured here (faer's
  or NumPy's, whichever is faster);
- QR-bound ceiling: the sweep rate, as a share of that GEMM rate, if every kernel but the QR ran
  at the GEMM rate and the QR took the time it took (the QR scales neither with the GEMM nor
  with threads here);
- GEMM / QR / copies / other: shares of the compute lanes' busy time spent in batched GEMMs,
  in QR and SVD, in copies (permutes, casts, slices, joins), and in the rest (host work of the
  kernels between primitives).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np

# name: (generator arguments, run arguments, element type)
CASES: dict[str, tuple[list[str], list[str], str]] = {}
for chi in (64, 128, 256):
    for mpo in (4, 16, 32):
        for factor in (1, 2):
            CASES[f"mps-{chi}-{mpo}-{factor * chi}"] = (
                ["random", "--sites", "20", "--bond", str(chi), "--mpo-bond", str(mpo)],
                ["--chi-out", str(factor * chi)],
                "complex128",
            )
CASES["mpo-wide"] = (
    ["identity", "--sites", "25", "--mpo-bond", "256", "--bond", "4"],
    ["--chi-out", "256"],
    "complex128",
)
CASES["mpo-narrow"] = (
    ["identity", "--sites", "25", "--mpo-bond", "4", "--bond", "256"],
    ["--chi-out", "256"],
    "complex128",
)
CASES["ising-depth-3"] = (
    ["ising", "--sites", "20", "--bond", "128", "--depth", "3"],
    ["--chi-out", "128"],
    "complex128",
)
for dtype in ("complex64", "float64"):
    CASES[f"mps-128-16-128-{dtype}"] = (
        ["random", "--sites", "20", "--bond", "128", "--mpo-bond", "16", "--dtype", dtype],
        ["--chi-out", "128"],
        dtype,
    )

# The large cases whose scaling from one thread to all is reported.
THREAD_CASES = ["mps-256-16-256", "mps-256-32-256", "mpo-wide", "mpo-narrow"]

SHAPES = [(1024, 1024, 1024), (4096, 256, 512), (8192, 128, 256), (2048, 2048, 256)]
FAER_KEY = {"complex128": "zgemm_gflops", "complex64": "cgemm_gflops", "float64": "dgemm_gflops"}
FLOPS_PER_FMA = {"complex128": 8, "complex64": 8, "float64": 2}


def numpy_rate(dtype: str) -> float:
    """Best GFLOP/s of NumPy's matmul (OpenBLAS) over SHAPES in `dtype`."""
    rng = np.random.default_rng(0)
    best = 0.0
    for m, k, n in SHAPES:
        a = rng.standard_normal((m, k)).astype(dtype)
        b = rng.standard_normal((k, n)).astype(dtype)
        for _ in range(4):
            start = time.perf_counter()
            a @ b
            seconds = time.perf_counter() - start
            best = max(best, FLOPS_PER_FMA[dtype] * m * n * k / seconds / 1e9)
    return best


def run_case(binary: str, work: Path, name: str, reps: int, threads: int = 0) -> dict:
    """The fastest of `reps` traced runs of case `name` on `threads` threads (0: one per core),
    with its trace's kernel sums."""
    gen, run, dtype = CASES[name]
    problem, out, trace = work / name, work / f"{name}.out", work / f"{name}.trace.json"
    if not problem.exists():
        subprocess.run([binary, "gen", *gen, "--seed", "1", str(problem)], check=True,
                       stdout=subprocess.DEVNULL)
    best = None
    for _ in range(reps):
        shutil.rmtree(out, ignore_errors=True)
        report = json.loads(subprocess.run(
            [binary, "run", str(problem), *run, "--out", str(out), "--json", "--trace",
             str(trace) + ".new", "--threads", str(threads)], check=True, capture_output=True,
            text=True).stdout)
        if best is None or report["gflops_per_s"] > best["gflops_per_s"]:
            best = report
            os.replace(str(trace) + ".new", trace)
        else:
            os.remove(str(trace) + ".new")
    summary = json.loads(subprocess.run([binary, "report", "--json", str(trace)], check=True,
                                        capture_output=True, text=True).stdout)
    busy = sum(k["busy_s"] for k in summary["kernels"])
    if busy <= 0:
        raise SystemExit(f"{name}: the trace {trace} has no compute tasks")
    share = lambda key: sum(k[key] * k["busy_s"] for k in summary["kernels"]) / busy
    best["dtype"] = dtype
    best["shares"] = {key: share(f"{key}_share") for key in ("gemm", "factorization", "copy")}
    best["kernels"] = summary["kernels"]
    shutil.rmtree(out, ignore_errors=True)
    return best


def qr_bound(run: dict, gemm_rate: float) -> float:
    """GFLOP/s of `run`'s flops if all but its QR ran at `gemm_rate` and the QR as it did."""
    qr = next((k for k in run["kernels"] if k["kernel"] == "qr"), None)
    qr_s = qr["busy_s"] if qr else 0.0
    qr_flops = qr["gflops_per_s"] * 1e9 * qr_s if qr else 0.0
    return run["flops"] / ((run["flops"] - qr_flops) / (gemm_rate * 1e9) + qr_s) / 1e9


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--faer", required=True, help="the JSON line of the zgemm_rate bench")
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True, type=Path)
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--cases", nargs="*", default=list(CASES))
    parser.add_argument("--thread-cases", nargs="*", default=THREAD_CASES,
                        help="cases run on one thread and on all, for the scaling table")
    args = parser.parse_args()
    unknown = [c for c in args.cases + args.thread_cases if c not in CASES]
    if unknown:
        raise SystemExit(f"unknown cases {unknown}; known: {', '.join(CASES)}")
    args.work.mkdir(parents=True, exist_ok=True)
    faer = json.loads(args.faer)
    rates = {d: {"faer": faer[FAER_KEY[d]], "numpy": numpy_rate(d)} for d in FAER_KEY}
    print(f"GEMM rates on {os.cpu_count()} threads, GFLOP/s (best over {SHAPES}):\n")
    print("| type | faer | OpenBLAS (NumPy) |\n|---|---|---|")
    for dtype, r in rates.items():
        print(f"| {dtype} | {r['faer']:.1f} | {r['numpy']:.1f} |")
    print("\n| case | type | GFLOP | wall s | sweep GFLOP/s | % of best GEMM | QR-bound ceiling | GEMM | QR/SVD | copies | other | slowest kernel |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.cases:
        r = run_case(args.bin, args.work, name, args.reps)
        ceiling = max(rates[r["dtype"]].values())
        s = r["shares"]
        other = max(0.0, 1.0 - sum(s.values()))
        slow = min(r["kernels"], key=lambda k: k["gflops_per_s"] if k["busy_s"] > 0.05 * sum(
            x["busy_s"] for x in r["kernels"]) else float("inf"))
        print(f"| {name} | {r['dtype']} | {r['flops'] / 1e9:.1f} | {r['wall_s']:.3f} | "
              f"{r['gflops_per_s']:.1f} | {100 * r['gflops_per_s'] / ceiling:.0f} % | "
              f"{100 * qr_bound(r, ceiling) / ceiling:.0f} % | "
              f"{100 * s['gemm']:.0f} % | {100 * s['factorization']:.0f} % | "
              f"{100 * s['copy']:.0f} % | {100 * other:.0f} % | "
              f"{slow['kernel']} {slow['gflops_per_s']:.0f} GFLOP/s |", flush=True)

    threads_table(args)


def threads_table(args: argparse.Namespace) -> None:
    """Each of `args.thread_cases` on one thread and on all: the speed-up of the sweep and of
    each kernel."""
    if not args.thread_cases:
        return
    print(f"\nFrom 1 to {os.cpu_count()} threads (speed-up of the compute busy time, fastest of "
          f"{args.reps} runs each):\n")
    kernels = ["env", "fold", "sketch", "project", "qr"]
    print("| case | 1 thread s | all s | speed-up | " + " | ".join(kernels) + " |")
    print("|---|---|---|---|" + "---|" * len(kernels))
    for name in args.thread_cases:
        one = run_case(args.bin, args.work, name, args.reps, threads=1)
        all_ = run_case(args.bin, args.work, name, args.reps)
        busy = lambda r, k: next((x["busy_s"] for x in r["kernels"] if x["kernel"] == k), 0.0)
        ratios = [busy(one, k) / busy(all_, k) if busy(all_, k) > 0 else float("nan")
                  for k in kernels]
        print(f"| {name} | {one['compute_busy_s']:.3f} | {all_['compute_busy_s']:.3f} | "
              f"{one['compute_busy_s'] / all_['compute_busy_s']:.2f}x | "
              + " | ".join(f"{r:.2f}x" for r in ratios) + " |", flush=True)


if __name__ == "__main__":
    main()
