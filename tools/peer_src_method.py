#!/usr/bin/env python3
"""Run the src-method peer (PyPI `src-method`) on a srcflow problem directory.

Usage:
    PY=$(tools/peer_venv.sh | tail -1)
    $PY tools/peer_src_method.py PROBLEM_DIR --chi-out N --out OUT_DIR [--seed S]
        [--cutoff C] [--oversample F|paper] [--verbose]

src-method uses the same quimb layout as srcflow (MPS (l, r, p), MPO (l, r, u, d),
boundary sites drop the outer bond) and the same mathematical stack order
(src(A, B, psi) = A·B·psi, each `d` joining the next train's `u`), so the layers
are passed through unchanged, with no transposes. Prints one JSON line on stdout;
src-method's own logs (silent by default) go to stderr.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import resource
import sys
import time
from pathlib import Path

import numpy as np
import src_method

FORMAT = "srcflow/1"


def load_train(directory: Path, lazy: bool) -> list[np.ndarray]:
    """Load `<directory>/<site:05>.npy` for sites 0..n-1 (memory-mapped when `lazy`)."""
    files = sorted(p for p in directory.glob("*.npy") if re.fullmatch(r"\d{5}", p.stem))
    if [int(p.stem) for p in files] != list(range(len(files))) or not files:
        sys.exit(f"{directory}: expected site files 00000.npy .. contiguously")
    return [np.load(p, mmap_mode="r" if lazy else None) for p in files]


def load_problem(problem: Path, lazy: bool) -> tuple[list[list[np.ndarray]], list[str]]:
    """Load every layer of a problem directory, in manifest (mathematical) order."""
    manifest = json.loads((problem / "manifest.json").read_text())
    if manifest.get("format") != FORMAT:
        sys.exit(f"{problem}: unsupported format {manifest.get('format')!r}")
    layers = manifest["layers"]
    return [load_train(problem / layer["name"], lazy) for layer in layers], [
        layer["kind"] for layer in layers
    ]


class SweepLog(logging.Handler):
    """Collects the pass times, stalls and planned host peak src-method logs at DEBUG."""

    PATTERNS = {
        "left_to_right_s": r"Left-to-right sweep: ([\d.]+) s",
        "right_to_left_s": r"Right-to-left sweep: ([\d.]+) s",
        "stall_sites_s": r"SRC stalls: sites ([\d.]+) s",
        "stall_environments_s": r"SRC stalls: .*environments ([\d.]+) s",
        "planned_host_peak": r"host peak=(\d+) B",
        "planned_disk_bytes": r"disk=(\d+) B",
    }

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.values: dict[str, float] = {}

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        for key, pattern in self.PATTERNS.items():
            found = re.search(pattern, message)
            if found:
                self.values[key] = float(found.group(1))


def write_problem(out: Path, train: list[np.ndarray], kind: str) -> None:
    """Write `train` as a one-layer problem directory (layer `out`) at `out`."""
    site_dir = out / "out"
    site_dir.mkdir(parents=True, exist_ok=True)
    for stale in site_dir.glob("*.npy"):  # a previous run may have had more sites
        stale.unlink()
    for i, core in enumerate(train):
        np.save(site_dir / f"{i:05d}.npy", np.ascontiguousarray(core, dtype=np.complex128))
    manifest = {"format": FORMAT, "layers": [{"name": "out", "kind": kind}]}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


def bonds_of(train: list[np.ndarray]) -> list[int]:
    """Return the n-1 inner bond dimensions (right bond of each site but the last)."""
    return [core.shape[0] if i == 0 else core.shape[1] for i, core in enumerate(train[:-1])]


def print_report(tool: str, version: str, seconds: float, chi_out: int,
                 train: list[np.ndarray], **extra: float) -> None:
    """Print a peer run's JSON line: the tool, its time, the output's bonds, the peak RSS."""
    report = {
        "tool": tool,
        "version": version,
        "seconds": seconds,
        "chi_out": chi_out,
        "bonds": bonds_of(train),
        "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        **extra,
    }
    print(json.dumps(report), flush=True)


def parse_oversample(text: str) -> float | str:
    """Parse --oversample: a float, or 'paper' (src-method's oversample=None)."""
    return "paper" if text.lower() in ("paper", "none") else float(text)


def main() -> None:
    """Parse arguments, run one timed `src_method.src` call, write and report."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("problem", type=Path, help="srcflow/1 problem directory")
    ap.add_argument("--chi-out", type=int, required=True)
    ap.add_argument("--out", type=Path, required=True, help="output problem directory")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--cutoff", type=float, default=None)
    ap.add_argument(
        "--oversample", type=parse_oversample, default=None,
        help="sketch factor >= 1.0 (src-method default 1.0), or 'paper' for its None",
    )
    ap.add_argument("--host-memory", help="host budget (src-method Resources), e.g. 250MB")
    ap.add_argument("--scratch-dir", help="scratch directory (src-method Resources)")
    ap.add_argument("--verbose", action="store_true", help="src-method DEBUG logs to stderr")
    args = ap.parse_args()

    # src-method logs through `logging` (NullHandler by default): route it to stderr.
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(name)s %(levelname)s: %(message)s",
    )

    sweep_log = SweepLog()
    logging.getLogger("src_method").addHandler(sweep_log)
    logging.getLogger("src_method").setLevel(logging.DEBUG)
    logging.getLogger("src_method").propagate = args.verbose
    out_of_core = args.host_memory is not None or args.scratch_dir is not None
    trains, kinds = load_problem(args.problem, lazy=out_of_core)
    # An MPS at either end (ket last, or an unconjugated bra first) gives an MPS.
    out_kind = "mps" if "mps" in kinds else "mpo"

    # Pass only the options given, so src-method's own defaults apply otherwise.
    options = {"seed": args.seed}
    if args.cutoff is not None:
        options["cutoff"] = args.cutoff
    if args.oversample is not None:
        options["oversample"] = None if args.oversample == "paper" else args.oversample
    if out_of_core:
        options["resources"] = src_method.Resources(
            host_memory=args.host_memory, scratch_dir=args.scratch_dir
        )

    start = time.perf_counter()
    result = src_method.src(*trains, chi_out=args.chi_out, device="cpu", **options)
    seconds = time.perf_counter() - start

    write_problem(args.out, result, out_kind)
    print_report("src-method", src_method.__version__, seconds, args.chi_out, result,
                 **sweep_log.values)


if __name__ == "__main__":
    main()
