#!/usr/bin/env python3
"""Run quimb's SRC (`tensor_network_1d_compress(..., method="src")`) on a srcflow MPO·MPS
problem directory.

Usage:
    PY=$(tools/peer_venv.sh | tail -1)
    $PY tools/peer_quimb.py PROBLEM_DIR --chi-out N --out OUT_DIR [--seed S]

The problem's two layers (an MPO, then the MPS it acts on) become a quimb
`MatrixProductOperator` (shape "lrud") and `MatrixProductState` (shape "lrp"), the quimb
layout srcflow writes; the MPO's lower (`d`) legs meet the state, as in srcflow. Prints one JSON
line on stdout with the time of the second of two identical calls (the first pays once for
imports and contraction-path searches; loading and writing excluded) and of the first.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import quimb
import quimb.tensor as qtn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from peer_src_method import load_problem, print_report, write_problem  # noqa: E402


def main() -> None:
    """Parse arguments, run one timed quimb SRC call, write and report."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("problem", type=Path, help="srcflow/1 problem directory (MPO, then MPS)")
    ap.add_argument("--chi-out", type=int, required=True)
    ap.add_argument("--out", type=Path, required=True, help="output problem directory")
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args()

    trains, kinds = load_problem(args.problem, lazy=False)
    if kinds != ["mpo", "mps"]:
        sys.exit(f"{args.problem}: quimb's peer runs an MPO·MPS problem, found layers {kinds}")
    mpo = qtn.MatrixProductOperator(trains[0], shape="lrud")
    mps = qtn.MatrixProductState(trains[1], shape="lrp")

    def src():
        stack = qtn.tensor_network_apply_op_vec(mpo, mps, contract=False)
        return qtn.tensor_network_1d_compress(
            stack, max_bond=args.chi_out, cutoff=0.0, method="src", seed=args.seed
        )

    first = time.perf_counter()
    src()
    start = time.perf_counter()
    result = src()
    seconds = time.perf_counter() - start

    result.permute_arrays("lrp")
    train = list(result.arrays)
    write_problem(args.out, train, "mps")
    print_report("quimb", quimb.__version__, seconds, args.chi_out, train,
                 first_call_seconds=start - first)


if __name__ == "__main__":
    main()
