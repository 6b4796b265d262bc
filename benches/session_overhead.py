#!/usr/bin/env python3
"""Per-call time of tiny products from Python: srcflow against src-method, in one process and
one run.

Usage (benches/session_overhead.sh sets it up):
    $PY benches/session_overhead.py [--calls 200] [--sites 4 100]

For each size n: the identity MPO times a random bond-2 MPS (complex128, χ̄ = 2), as in a loop
of small calls. After one call of each to warm up, it alternates blocks of CALLS calls of
`srcflow.src` (on the default session, warm), of `srcflow.src` on a new `srcflow.Session`
each call (what every call cost before sessions: backends and plan made anew), and of
`src_method.src`, and reports each one's median and best time per call, the ratio of srcflow's
median to src-method's, and srcflow's tasks per call and microseconds per task outside its
backend primitives (`report["overhead_per_task_s"]`, the median of CALLS calls of `srcflow.run`).
Prints a markdown table.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import src_method

import srcflow


def identity_mpo(n: int) -> list[np.ndarray]:
    """The identity on n qubits as a bond-1 MPO in quimb layout."""
    eye = np.eye(2, dtype=complex)
    return [eye[None], *[eye[None, None]] * (n - 2), eye[None]]


def random_mps(n: int, bond: int, rng: np.random.Generator) -> list[np.ndarray]:
    """A random complex MPS of bond `bond` in quimb layout."""
    def site(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    return [site(bond, 2), *[site(bond, bond, 2) for _ in range(n - 2)], site(bond, 2)]


def per_call(call, calls: int) -> list[float]:
    """Seconds of each of `calls` calls of `call()`."""
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return times


def row(n: int, calls: int, rounds: int) -> str:
    """The table row of size n."""
    rng = np.random.default_rng(n)
    mpo, mps = identity_mpo(n), random_mps(n, 2, rng)
    tools = {
        "warm": lambda: srcflow.src(mpo, mps, chi_out=2, seed=1),
        "new session": lambda: srcflow.src(mpo, mps, chi_out=2, seed=1, session=srcflow.Session()),
        "src-method": lambda: src_method.src(mpo, mps, chi_out=2, seed=1),
    }
    times: dict[str, list[float]] = {name: [] for name in tools}
    for call in tools.values():
        call()
    for _ in range(rounds):
        for name, call in tools.items():
            times[name] += per_call(call, calls)
    overheads = [srcflow.run(mpo, mps, chi_out=2, seed=1).report for _ in range(calls)]
    overhead = statistics.median(r["overhead_per_task_s"] for r in overheads)
    report = overheads[0]
    ms = {name: 1e3 * statistics.median(t) for name, t in times.items()}
    best = {name: 1e3 * min(t) for name, t in times.items()}
    return (
        f"| {n} | {ms['warm']:.3f} ({best['warm']:.3f}) | {ms['new session']:.3f} | "
        f"{ms['src-method']:.3f} ({best['src-method']:.3f}) | {ms['warm'] / ms['src-method']:.3f} | "
        f"{report['tasks']} | {1e6 * overhead:.1f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100, help="calls per block")
    parser.add_argument("--rounds", type=int, default=3, help="blocks of each tool, alternated")
    parser.add_argument("--sites", type=int, nargs="+", default=[4, 100])
    args = parser.parse_args()
    print(f"{args.rounds} × {args.calls} calls each, alternated; median (best) ms per call.")
    print()
    print("| n | srcflow, warm session | srcflow, new session per call | src-method | "
          "warm srcflow / src-method | srcflow tasks | µs per task outside primitives |")
    print("|---|---|---|---|---|---|---|")
    for n in args.sites:
        print(row(n, args.calls, args.rounds), flush=True)


if __name__ == "__main__":
    main()
