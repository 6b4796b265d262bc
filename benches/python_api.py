#!/usr/bin/env python3
"""The Python package against the CLI and against src-method, in one process and one run.

Usage (benches/python_api.sh sets it up):
    $PY benches/python_api.py --bin target/release/srcflow --work DIR [--reps 3] [--cases small large]

For each case, a random MPO·MPS problem (`srcflow gen random`) is loaded into NumPy arrays once;
then, alternating REPS times: `srcflow run` on its files (process wall time: reading the .npy
files and writing the output included), `srcflow.run` on the arrays (what `srcflow.src` calls,
with the report), and `src_method.src` on the
same arrays (each call's wall time). Prints a markdown table of the best times and the ratios:
src-method over the CLI and over the Python call (the speed-ups), and the Python call over the
CLI process (its overhead; negative when the Python call is faster, as it reads no files).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from pathlib import Path

import numpy as np
import src_method

import srcflow

CASES = {"small": (30, 128, 16, 128), "large": (30, 256, 16, 256)}


def load(problem: Path) -> list[list[np.ndarray]]:
    """The problem's trains in mathematical order, as in-memory arrays."""
    manifest = json.loads((problem / "manifest.json").read_text())
    return [
        [np.load(path) for path in sorted((problem / layer["name"]).glob("*.npy"))]
        for layer in manifest["layers"]
    ]


def timed(call) -> float:
    """The wall time of `call()`."""
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def case_row(binary: str, work: Path, name: str, reps: int) -> str:
    """The table row of case `name`."""
    sites, bond, mpo_bond, chi_out = CASES[name]
    problem, out = work / name, work / f"{name}-out"
    subprocess.run(
        [binary, "gen", "random", str(problem), "--sites", str(sites), "--bond", str(bond),
         "--mpo-bond", str(mpo_bond), "--seed", "1"],
        check=True, capture_output=True,
    )
    trains = load(problem)
    cli, python, peer, engine = [], [], [], []

    def run_cli():
        subprocess.run(
            [binary, "run", str(problem), "--chi-out", str(chi_out), "--out", str(out), "--json"],
            check=True, capture_output=True,
        )
        subprocess.run(["rm", "-rf", str(out)], check=True)

    for _ in range(reps):
        cli.append(timed(run_cli))
        reports = []
        python.append(timed(lambda: reports.append(srcflow.run(*trains, chi_out=chi_out, seed=0))))
        engine.append(reports[0].report["wall_s"])
        peer.append(timed(lambda: src_method.src(*trains, chi_out=chi_out, seed=0)))
    t_cli, t_py, t_peer, t_engine = min(cli), min(python), min(peer), min(engine)
    return (
        f"| {name}: n={sites}, χ={bond}, D={mpo_bond}, χ̄={chi_out} | {t_cli:.3f} | {t_py:.3f} | "
        f"{t_engine:.3f} | {t_peer:.3f} | {t_peer / t_cli:.2f}× | {t_peer / t_py:.2f}× | "
        f"{100 * (t_py / t_cli - 1):+.1f} % | {100 * (t_py / t_engine - 1):+.1f} % |"
    )


def main() -> None:
    """Parses the arguments and prints the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True, type=Path)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    print(
        "| case | CLI s (process) | Python `srcflow.run` s | its engine s | src-method s | "
        "speed-up, CLI | speed-up, Python | Python vs CLI | Python vs its engine |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name in args.cases:
        print(case_row(args.bin, args.work, name, args.reps), flush=True)


if __name__ == "__main__":
    main()
