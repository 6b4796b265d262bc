#!/usr/bin/env python3
"""Runs src-method's own `bench_depth.py` unchanged, with the `src` and `apply` it imports from
`src_method` taken from srcflow or from src-method.

Usage (benches/evolve.sh sets it up):
    $PY benches/evolve_with.py srcflow|src-method BENCH_DEPTH_PY [its arguments…]

With `srcflow`, the module `src_method` that the script imports is srcflow's drop-in
(`srcflow.src`, `srcflow.apply`): the same call, argument for argument, on srcflow's engine and
its default session. Everything else the script does (the states, the reference, the timing) is
its own.
"""

from __future__ import annotations

import runpy
import sys
import types


def main() -> None:
    which, script, *arguments = sys.argv[1:]
    if which == "srcflow":
        import srcflow

        shim = types.ModuleType("src_method")
        shim.src, shim.apply, shim.compress = srcflow.src, srcflow.apply, srcflow.compress
        sys.modules["src_method"] = shim
    elif which != "src-method":
        sys.exit(f"expected srcflow or src-method, got {which!r}")
    sys.argv = [script, *arguments]
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
