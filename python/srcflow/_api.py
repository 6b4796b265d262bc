"""src-method's entry points (`src`, `apply`, `compress`) over srcflow's engine, and `run`
and `graph`, which give the report and the sweep graph too."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from . import _arguments, _core, _trains
from ._graph import Graph
from ._resources import Resources
from ._session import Session, default_session


@dataclass(frozen=True)
class Run:
    """A run's output and what it did.

    Attributes:
        output: The compressed train: NumPy arrays in quimb layout, right-canonical
            (left-canonical when oversampling or with a cutoff, on three or more sites), or a
            quimb object of its kind
            when a quimb object went in.
        report: The run's report (times, flops, stalls, memory, environments per tier), as
            `srcflow run --json` prints it.
    """

    output: list[np.ndarray] | object
    report: dict


@dataclass(frozen=True)
class EngineOptions:
    """What srcflow adds to src-method's arguments (see `run`)."""

    trace: str | os.PathLike[str] | None = None
    progress: bool = False
    prefetch: str | None = None
    batch_cols: int | None = None
    threads: int | None = None


def _session(session: object) -> Session:
    """The session a call runs on: `session`, or the default one."""
    if session is None:
        return default_session()
    if not isinstance(session, Session):
        raise TypeError(f"session must be a srcflow.Session or None, got {session!r}.")
    return session


def _request(
    trains: Sequence,
    chi_out: object,
    cutoff: float,
    oversample: float | None,
    dtype: object,
    seed: int | None,
    device: str,
    resources: Resources | None,
    engine: EngineOptions,
) -> tuple[dict, bool]:
    """The engine's request for a call, checked in src-method's order, and whether a quimb
    object went in."""
    chi = _arguments.chi_out(chi_out)
    cut = _arguments.cutoff(cutoff)
    sketch = _arguments.sketch_size(chi, oversample)
    backend = _arguments.backend(device)
    if backend == "cuda":
        _core.check_cuda()
    run_seed = _arguments.seed(seed)
    quimb_in = any(_trains.is_quimb(t) for t in trains)
    trains = [_list(t) for t in trains]
    kinds = [_trains.kind_of(t) for t in trains]
    _trains.check_stack(trains, kinds)
    dtypes = [[_trains.read_dtype(s, i, j) for j, s in enumerate(t)] for i, t in enumerate(trains)]
    if resources is not None and not isinstance(resources, Resources):
        raise TypeError(f"resources must be a srcflow.Resources or None, got {resources!r}.")
    request = {
        "trains": trains,
        "kinds": kinds,
        "shapes": [[list(np.shape(s)) for s in t] for t in trains],
        "dtypes": [[d.name for d in t] for t in dtypes],
        "dtype": _trains.result_dtype(dtypes, dtype).name,
        "chi_out": chi,
        "cutoff": cut,
        "oversample": _arguments.oversample_factor(chi, sketch),
        "seed": run_seed,
        "backend": backend,
        "prefetch": _arguments.prefetch(engine.prefetch),
        "batch_cols": _arguments.positive_or_none("batch_cols", engine.batch_cols),
        "threads": _arguments.positive_or_none("threads", engine.threads),
        **(resources or Resources()).request(),
    }
    return request, quimb_in


def run(
    *trains: Sequence,
    chi_out: int,
    cutoff: float = 0.0,
    oversample: float | None = 1.0,
    dtype: object = None,
    seed: int | None = None,
    device: str = "cpu",
    resources: Resources | None = None,
    trace: str | os.PathLike[str] | None = None,
    progress: bool = False,
    prefetch: str | None = None,
    batch_cols: int | None = None,
    threads: int | None = None,
    session: Session | None = None,
) -> Run:
    """The compressed product of a stack of trains, with the run's report.

    Takes `src`'s arguments and these:
        trace: Writes the run's Perfetto trace (Chrome JSON) to this path.
        progress: Draws a progress bar on standard error when it is a terminal.
        prefetch: When fetches of spilled environments start: "none", "lookahead:K" or
            "bandwidth" (the default) / "bandwidth:WINDOW".
        batch_cols: Sketch columns per environment task (default: the planner's choice).
        threads: Worker threads (default: one per core).
        session: The `Session` to run on (default: the process's default session).
    """
    engine = EngineOptions(trace, progress, prefetch, batch_cols, threads)
    on = _session(session)
    request, quimb_in = _request(
        trains, chi_out, cutoff, oversample, dtype, seed, device, resources, engine
    )
    path = None if trace is None else os.fspath(trace)
    arrays, report = on._call(_core.run, request, trace=path, progress=bool(progress))
    kind = "mps" if "mps" in request["kinds"] else "mpo"
    output = _trains.to_quimb(arrays, kind) if quimb_in else arrays
    return Run(output=output, report=json.loads(report))


def src(
    *trains: Sequence,
    chi_out: int,
    cutoff: float = 0.0,
    oversample: float | None = 1.0,
    dtype: object = None,
    seed: int | None = None,
    device: str = "cpu",
    resources: Resources | None = None,
    **engine: object,
) -> list[np.ndarray] | object:
    """Contracts the stack `trains[0] · trains[1] · …` (mathematical order: the last acts first)
    and compresses it with SRC to bonds of at most `chi_out`: src-method's `src`, argument for
    argument (see the README's table). A leading MPS is a bra used unconjugated. Returns the
    output's site arrays in quimb layout, right-canonical (left-canonical when oversampling or
    with a cutoff, on three or more sites), or a quimb object when one went in. Further keywords (`trace`, `progress`, `prefetch`,
    `batch_cols`, `threads`, `session`) are `run`'s."""
    return run(
        *trains, chi_out=chi_out, cutoff=cutoff, oversample=oversample, dtype=dtype,
        seed=seed, device=device, resources=resources, **engine,
    ).output


def apply(
    left_tensor: Sequence,
    right_tensor: Sequence,
    chi_out: int,
    *,
    cutoff: float = 0.0,
    oversample: float | None = 1.0,
    dtype: object = None,
    seed: int | None = None,
    device: str = "cpu",
    resources: Resources | None = None,
    **engine: object,
) -> list[np.ndarray] | object:
    """`src(left_tensor, right_tensor, …)` for an MPO on the left and an MPS or MPO on the
    right (TypeError for any other pair), as src-method's `apply`."""
    left, right = _trains.kind_of(_list(left_tensor)), _trains.kind_of(_list(right_tensor))
    if left != "mpo" or right is None:
        raise TypeError(
            f"Unsupported combination of tensor network types: {left or 'unknown'} and "
            f"{right or 'unknown'}; expected an MPO on the left and an MPS or MPO on the right."
        )
    return src(
        left_tensor, right_tensor, chi_out=chi_out, cutoff=cutoff, oversample=oversample,
        dtype=dtype, seed=seed, device=device, resources=resources, **engine,
    )


def compress(
    tensor: Sequence,
    chi_out: int,
    *,
    cutoff: float = 0.0,
    oversample: float | None = 1.0,
    dtype: object = None,
    seed: int | None = None,
    device: str = "cpu",
    resources: Resources | None = None,
    **engine: object,
) -> list[np.ndarray] | object:
    """`src(tensor, …)`: one MPS or MPO compressed to bonds of at most `chi_out`."""
    return src(
        tensor, chi_out=chi_out, cutoff=cutoff, oversample=oversample, dtype=dtype,
        seed=seed, device=device, resources=resources, **engine,
    )


def graph(
    *trains: Sequence,
    chi_out: int,
    cutoff: float = 0.0,
    oversample: float | None = 1.0,
    dtype: object = None,
    device: str = "cpu",
    resources: Resources | None = None,
    prefetch: str | None = None,
    batch_cols: int | None = None,
    session: Session | None = None,
) -> Graph:
    """The sweep graph `run` would execute for these arguments, planned for the budgets,
    without reading any site's data (on `session`, default the process's, which keeps the
    plan for a `run` with the same arguments)."""
    engine = EngineOptions(prefetch=prefetch, batch_cols=batch_cols)
    on = _session(session)
    request, _ = _request(
        trains, chi_out, cutoff, oversample, dtype, 0, device, resources, engine
    )
    summary, dot = on._call(_core.graph, request)
    return Graph.of(json.loads(summary), dot)


def _list(train: object) -> list:
    """The site arrays of `train`, a list or a quimb object."""
    return _trains.from_quimb(train) if _trains.is_quimb(train) else list(train)
