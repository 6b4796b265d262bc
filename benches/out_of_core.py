#!/usr/bin/env python3
"""Out-of-core benchmark (issue 3): srcflow with at least half of the environments on disk.

Run through `benches/out_of_core.sh`, which builds srcflow and the src-method venv. Measures in
one run, on one problem:
  A. all in memory (the compute-only time),
  B. >= half the environments on disk, default prefetch, unthrottled disk,
  C. the same with `--prefetch none` (fetch on demand),
  D. the same as B with `--disk-bandwidth` set so that writing the disk environments takes as
     long as the left-to-right compute of A (the slowest disk that can still hide behind both
     passes),
  G. the same as B with only the disk's reads capped (`--disk-bandwidth read=RATE`), so that
     reading the disk environments takes as long as the right-to-left compute of an
     all-in-memory run made just before it (its twin: this machine's speed drifts by 10-20 %
     over minutes): the issue's overlap case, against its limit max(compute-only, bytes read /
     bandwidth) from that twin; the best of the pairs is shown, and every pair's ratio,
  F. as G with writes capped at the same rate too; the left-to-right pass is then bound by
     writes, and the limit of perfect overlap is max(compute, writes) + max(compute, reads),
     pass by pass,
  E. src-method 0.5.0 given the same host budget and scratch directory (so it spills to disk).
One more run like B is traced and drawn to benches/out_of_core_timeline.svg.
Prints a markdown report: stall fractions, walls against the limit of perfect overlap, and
measured peak RSS against the planner's host peak. Best of REPS for times; every run's RSS.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

BIN, PY, WORK = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
REPS = int(os.environ.get("REPS", "2"))
SITES, BOND, MPO, CHI = (int(os.environ.get(k, d)) for k, d in
                         [("SITES", 50), ("BOND", 256), ("MPO_BOND", 16), ("CHI_OUT", 256)])
REPO = Path(__file__).resolve().parent.parent
SCRATCH = WORK / "scratch"


def srcflow(*args: str) -> dict:
    """Runs srcflow with --json and returns its parsed output."""
    out = subprocess.run([str(BIN), *args, "--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def plan(budget_args: list[str]) -> dict:
    return srcflow("plan", str(WORK / "problem"), "--chi-out", str(CHI), *budget_args)


def run(budget_args: list[str], *extra: str) -> dict:
    out = WORK / "out"
    shutil.rmtree(out, ignore_errors=True)
    report = srcflow("run", str(WORK / "problem"), "--chi-out", str(CHI), "--out", str(out),
                     *budget_args, *extra)
    assert not any(SCRATCH.glob("srcflow-scratch-*")), "scratch left behind"
    return report


def peer(host_budget: int) -> dict:
    out = WORK / "peer"
    shutil.rmtree(out, ignore_errors=True)
    cmd = [PY, str(REPO / "tools/peer_src_method.py"), str(WORK / "problem"), "--chi-out",
           str(CHI), "--out", str(out), "--seed", "0", "--host-memory", f"{host_budget}B",
           "--scratch-dir", str(SCRATCH)]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def budgets_with_half_on_disk() -> tuple[list[str], dict]:
    """Host budgets lowered from the all-in-memory peak until >= half the envs are on disk."""
    base = plan(["--scratch-dir", str(SCRATCH)])
    step = max(base["env_bytes"]) // 2
    host = base["process_peak"]
    while True:
        host -= step
        args = ["--host-memory", f"{host}B", "--scratch-dir", str(SCRATCH)]
        p = plan(args)
        if 2 * p["tiers"].count("Disk") >= len(p["tiers"]):
            return args, p


def stall_share(report: dict) -> float:
    return report["stalls_right_to_left"]["environments_s"] / report["right_to_left_s"]


def lane_bytes(report: dict, lane: str) -> int:
    return sum(u["bytes"] for u in report["lanes"] if u["lane"] == lane)


def best(runs: list[dict], key: str) -> dict:
    return min(runs, key=lambda r: r[key])


def draw_timeline(disk_args: list[str]) -> None:
    """One more run like B with --trace, drawn to benches/out_of_core_timeline.svg."""
    trace = WORK / "trace.json"
    run(disk_args, "--trace", str(trace))
    subprocess.run([str(BIN), "report", str(trace), "--svg",
                    str(REPO / "benches/out_of_core_timeline.svg")], check=True,
                   capture_output=True)


def main() -> None:
    SCRATCH.mkdir(exist_ok=True)
    subprocess.run([str(BIN), "gen", "random", str(WORK / "problem"), "--sites", str(SITES),
                    "--bond", str(BOND), "--mpo-bond", str(MPO), "--seed", "1"], check=True,
                   capture_output=True)
    disk_args, disk_plan = budgets_with_half_on_disk()
    host_budget = int(disk_args[1][:-1])
    memory = [run(["--scratch-dir", str(SCRATCH)]) for _ in range(REPS)]
    a = best(memory, "wall_s")
    disk_bytes = sum(b for b, t in zip(disk_plan["env_bytes"], disk_plan["tiers"]) if t == "Disk")
    rate = disk_bytes / a["left_to_right_s"]
    slow = disk_bytes / a["right_to_left_s"]
    runs: dict[str, list[dict]] = {k: [] for k in "BCDGFE"}
    pairs = []  # (G's all-in-memory twin, G's read rate, G)
    for _ in range(REPS):
        runs["B"].append(run(disk_args))
        runs["C"].append(run(disk_args, "--prefetch", "none"))
        runs["D"].append(run(disk_args, "--disk-bandwidth", f"{int(rate)}B/s"))
        twin = run(["--scratch-dir", str(SCRATCH)])
        memory.append(twin)
        twin_rate = disk_bytes / twin["right_to_left_s"]
        runs["G"].append(run(disk_args, "--disk-bandwidth", f"read={int(twin_rate)}B/s"))
        pairs.append((twin, twin_rate, runs["G"][-1]))
        runs["F"].append(run(disk_args, "--disk-bandwidth", f"{int(slow)}B/s"))
        runs["E"].append(peer(host_budget))
    a = best(memory, "wall_s")
    draw_timeline(disk_args)
    b, c, d, f = (best(runs[k], "wall_s") for k in "BCDF")

    def pair_limit(pair: tuple[dict, float, dict]) -> float:
        twin, twin_rate, g_run = pair
        return max(twin["wall_s"], lane_bytes(g_run, "disk-read") / twin_rate)

    ratios = [p[2]["wall_s"] / pair_limit(p) for p in pairs]
    g_pair = pairs[ratios.index(min(ratios))]
    g = g_pair[2]
    e = best(runs["E"], "seconds")
    per_pass = (max(a["left_to_right_s"], lane_bytes(f, "disk-write") / slow)
                + max(a["right_to_left_s"], lane_bytes(f, "disk-read") / slow)
                + a["wall_s"] - a["left_to_right_s"] - a["right_to_left_s"])

    tiers = disk_plan["tiers"]
    print(f"Problem: `srcflow gen random --sites {SITES} --bond {BOND} --mpo-bond {MPO}`, "
          f"chi_out {CHI}; host budget {host_budget / 1e6:.1f} MB puts {tiers.count('Disk')} of "
          f"{len(tiers)} environments ({disk_bytes / 1e6:.0f} MB) on disk, "
          f"batch {disk_plan['batch_cols']}. Best of {REPS}.\n")
    print("| run | wall s | left-to-right s | right-to-left s | env stall s | "
          "stall share of right-to-left | disk read MB | limit s | wall / limit |")
    print("|---|---|---|---|---|---|---|---|---|")
    compute = a["wall_s"]
    for name, r, limit in [
        ("A: all in memory", a, None),
        ("B: disk, default prefetch", b, compute),
        ("C: disk, prefetch none", c, compute),
        (f"D: disk at {rate / 1e6:.0f} MB/s, default", d,
         max(compute, lane_bytes(d, "disk-read") / rate)),
        (f"G: disk reads at {g_pair[1] / 1e6:.0f} MB/s, default (limit from its twin)", g,
         pair_limit(g_pair)),
        (f"F: disk reads and writes at {slow / 1e6:.0f} MB/s, default (per-pass limit)", f,
         per_pass),
    ]:
        env = r["stalls_right_to_left"]["environments_s"]
        ratio = f"{r['wall_s'] / limit:.3f}" if limit else "—"
        lim = f"{limit:.3f}" if limit else "—"
        print(f"| {name} | {r['wall_s']:.3f} | {r['left_to_right_s']:.3f} | "
              f"{r['right_to_left_s']:.3f} | {env:.3f} | "
              f"{100 * stall_share(r):.1f} % | {lane_bytes(r, 'disk-read') / 1e6:.0f} | {lim} | "
              f"{ratio} |")
    e_stall = e.get("stall_environments_s", 0.0)
    e_rl = e.get("right_to_left_s", float("nan"))
    e_lr = e.get("left_to_right_s", float("nan"))
    print(f"| E: src-method, same host budget | {e['seconds']:.3f} | {e_lr:.3f} | {e_rl:.3f} | "
          f"{e_stall:.3f} | "
          f"{100 * e_stall / e_rl:.1f} % | — | — | — |")
    print()
    print("G, every pair (wall / limit, the limit from the all-in-memory run just before it): "
          + ", ".join(f"{r:.3f}" for r in ratios) + ".\n")
    print(f"Speed: srcflow (B) {e['seconds'] / b['wall_s']:.2f}x faster than src-method (E) "
          f"with the same host budget; src-method planned {e.get('planned_disk_bytes', 0) / 1e6:.0f}"
          f" MB on disk.\n")
    print("| run | planned host peak MB | measured peak RSS MB | measured / planned |")
    print("|---|---|---|---|")
    for key in "BCDGF":
        for i, r in enumerate(runs[key]):
            rss = r["peak_rss_bytes"]
            print(f"| {key}{i + 1} | {disk_plan['process_peak'] / 1e6:.1f} | {rss / 1e6:.1f} | "
                  f"{rss / disk_plan['process_peak']:.3f} |")
    for i, r in enumerate(runs["E"]):
        planned = r.get("planned_host_peak", float("nan"))
        print(f"| E{i + 1} (src-method) | {planned / 1e6:.1f} | {r['peak_rss_bytes'] / 1e6:.1f} | "
              f"{r['peak_rss_bytes'] / planned:.3f} |")


if __name__ == "__main__":
    main()
