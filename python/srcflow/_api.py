"""src-method's entry points (`src`, `apply`, `compress`) over srcflow's engine, and `run`
and `graph`, which give the report and the sweep graph too."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from . import _arguments, _core, _docstrings, _trains
from ._graph import Graph
from ._resources import Resources
from ._session import Session, default_session


@dataclass(frozen=True)
class Run:
    """A run's output and what it did, as `run` returns them.

    Attributes
    ----------
    output : list of numpy.ndarray, or a quimb object
        The compressed train, as `src` returns it.
    report : dict
        The run's report (times, flops, stalls, memory, environments per tier), as
        ``srcflow run --json`` prints it.
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


# The keywords `src`, `apply` and `compress` pass on to `run`.
_ENGINE_KEYWORDS = ("trace", "progress", "prefetch", "batch_cols", "threads", "session")


def _engine_keywords(function: str, engine: dict) -> dict:
    """`engine`, the further keywords given to `function`; TypeError naming `function` for
    one that `run` does not take, as Python reports it for a function's own arguments."""
    for key in engine:
        if key not in _ENGINE_KEYWORDS:
            raise TypeError(f"{function}() got an unexpected keyword argument '{key}'")
    return engine


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
) -> tuple[dict, dict | None]:
    """The engine's request for a call, checked in src-method's order, and the index and tag
    names of a quimb output (None when no quimb object went in)."""
    chi = _arguments.chi_out(chi_out)
    cut = _arguments.cutoff(cutoff)
    sketch = _arguments.sketch_size(chi, oversample)
    backend = _arguments.backend(device)
    if backend == "cuda":
        _core.check_cuda()
    run_seed = _arguments.seed(seed)
    given = trains
    trains = [_list(t, i) for i, t in enumerate(trains)]
    kinds = [_trains.kind_of(t) for t in trains]
    _trains.check_stack(trains, kinds)
    names = None
    if any(_trains.is_quimb(t) for t in given):
        names = _trains.quimb_names(given, "mps" if "mps" in kinds else "mpo")
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
        "seed_given": seed is not None,
        "backend": backend,
        "prefetch": _arguments.prefetch(engine.prefetch),
        "batch_cols": _arguments.positive_or_none("batch_cols", engine.batch_cols),
        "threads": _arguments.positive_or_none("threads", engine.threads),
        **(resources or Resources()).request(),
    }
    return request, names


@_docstrings.shares
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

    `src` with the report too: the same stacks and arguments, and srcflow's own.

    Parameters
    ----------
    *trains : sequences of arrays, or quimb MPS/MPO objects
        The stack, as `src` takes it.
    {sketch_parameters}
    {engine_parameters}

    Returns
    -------
    Run
        ``Run.output``, what `src` returns, and ``Run.report``, a dict: times, flops,
        stalls, memory peaks, environments per tier, as ``srcflow run --json`` prints it.

    Raises
    ------
    {raises}

    Examples
    --------
    >>> import quimb.tensor as qtn, srcflow
    >>> H, psi = qtn.MPO_ham_heis(8), qtn.MPS_rand_state(8, bond_dim=4)
    >>> result = srcflow.run(H, psi, chi_out=4, seed=1)
    >>> result.output.max_bond()
    4
    >>> result.report["tasks"] > 0
    True
    """
    trace_path = _arguments.output_file(trace, "trace")
    engine = EngineOptions(trace, progress, prefetch, batch_cols, threads)
    on = _session(session)
    request, names = _request(
        trains, chi_out, cutoff, oversample, dtype, seed, device, resources, engine
    )
    arrays, report = on._call(_core.run, request, trace=trace_path, progress=bool(progress))
    kind = "mps" if "mps" in request["kinds"] else "mpo"
    if names is not None:
        arrays = _trains.to_quimb(arrays, kind, names, _trains.exponent_of(trains))
    return Run(output=arrays, report=json.loads(report))


@_docstrings.shares
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
    """The product of a stack of MPOs and MPSs, compressed by Successive Randomized
    Compression: src-method's `src`, argument for argument.

    Contracts ``trains[0] @ trains[1] @ ...`` (mathematical order: the last acts first) and
    compresses it to bonds of at most `chi_out` in one sketched sweep, never forming the
    uncompressed product.

    Parameters
    ----------
    *trains : sequences of arrays, or quimb MPS/MPO objects
        The stack: MPOs, with an MPS last (a ket) or first (a bra, used unconjugated). Each
        train is a list of site arrays in quimb's default layout, an MPS site ``(left,
        right, phys)`` (the first ``(right, phys)``, the last ``(left, phys)``) and an MPO
        site ``(left, right, up, down)``; or a quimb ``MatrixProductState`` /
        ``MatrixProductOperator``, whatever order its tensors hold their legs in. Sites may
        be NumPy arrays, memory maps or anything with ``shape``, ``dtype``, ``ndim`` and
        ``__array__``: each is read once, when the sweep reaches it. Open boundaries only.
    {sketch_parameters}
    **engine
        srcflow's own keywords, as `run` takes them: ``trace``, ``progress``,
        ``prefetch``, ``batch_cols``, ``threads``, ``session``.

    Returns
    -------
    list of numpy.ndarray, or a quimb object
        The output's site arrays in quimb's layout, in the computed type, right-canonical
        (left-canonical after a rounding sweep, with `oversample` above 1 or a `cutoff`, on
        three or more sites). When a quimb object went in, a quimb object of the output's
        kind, which keeps the index and tag names of the train the product acts on (the
        ket; for an MPO product, the rightmost MPO, as quimb's ``A.apply(B)`` keeps B's), and
        whose ``exponent`` is the sum of the inputs' (the scale quimb keeps apart from the
        tensors, after ``equalize_norms``), as quimb's own compressions give it.

    Raises
    ------
    {raises}

    Notes
    -----
    {accuracy_notes}

    Examples
    --------
    >>> import numpy as np, srcflow
    >>> rng = np.random.default_rng(0)
    >>> mpo = [rng.standard_normal(s) for s in [(3, 2, 2), (3, 3, 2, 2), (3, 2, 2)]]
    >>> mps = [rng.standard_normal(s) for s in [(4, 2), (4, 4, 2), (4, 2)]]
    >>> out = srcflow.src(mpo, mps, chi_out=4, seed=1)
    >>> [site.shape for site in out]  # 3 sites of dimension 2 need no bond above 2
    [(2, 2), (2, 2, 2), (2, 2)]
    >>> near_optimal = srcflow.src(mpo, mps, chi_out=4, oversample=1.5, seed=1)
    """
    return run(
        *trains, chi_out=chi_out, cutoff=cutoff, oversample=oversample, dtype=dtype,
        seed=seed, device=device, resources=resources, **_engine_keywords("src", engine),
    ).output


@_docstrings.shares
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
    """An MPO applied to an MPS or an MPO, compressed: src-method's `apply`.

    ``src(left_tensor, right_tensor, ...)``, for an MPO on the left and an MPS or MPO on
    the right.

    Parameters
    ----------
    left_tensor : sequence of arrays, or a quimb MPO
        The operator applied, in `src`'s layout.
    right_tensor : sequence of arrays, or a quimb MPS or MPO
        What it is applied to.
    {sketch_parameters}
    **engine
        srcflow's own keywords, as `run` takes them.

    Returns
    -------
    list of numpy.ndarray, or a quimb object
        As `src` returns it; a quimb output keeps the names of `right_tensor`.

    Raises
    ------
    TypeError
        Any other pair than an MPO on the left and an MPS or MPO on the right; and as
        `src` raises.

    Examples
    --------
    >>> import quimb.tensor as qtn, srcflow
    >>> H = qtn.MPO_ham_heis(10)
    >>> psi = qtn.MPS_rand_state(10, bond_dim=8, site_ind_id="s{}")
    >>> out = srcflow.apply(H, psi, chi_out=8, seed=1)
    >>> out.site_ind_id
    's{}'
    >>> energy = psi.H @ out   # a number: the names match
    """
    engine = _engine_keywords("apply", engine)
    left, right = _trains.kind_of(_list(left_tensor, 0)), _trains.kind_of(_list(right_tensor, 1))
    if left != "mpo" or right is None:
        raise TypeError(
            f"Unsupported combination of tensor network types: {left or 'unknown'} and "
            f"{right or 'unknown'}; expected an MPO on the left and an MPS or MPO on the right."
        )
    return src(
        left_tensor, right_tensor, chi_out=chi_out, cutoff=cutoff, oversample=oversample,
        dtype=dtype, seed=seed, device=device, resources=resources, **engine,
    )


@_docstrings.shares
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
    """One MPS or MPO compressed to smaller bonds: src-method's `compress`.

    ``src(tensor, ...)``: a randomized sketch of the train, rather than a sweep of SVDs.

    Parameters
    ----------
    tensor : sequence of arrays, or a quimb MPS or MPO
        The train, in `src`'s layout.
    {sketch_parameters}
    **engine
        srcflow's own keywords, as `run` takes them.

    Returns
    -------
    list of numpy.ndarray, or a quimb object
        As `src` returns it.

    Raises
    ------
    {raises}

    Examples
    --------
    >>> import quimb.tensor as qtn, srcflow
    >>> psi = qtn.MPS_rand_state(12, bond_dim=16)
    >>> smaller = srcflow.compress(psi, chi_out=8, oversample=None, seed=1)
    >>> smaller.max_bond()
    8
    """
    return src(
        tensor, chi_out=chi_out, cutoff=cutoff, oversample=oversample, dtype=dtype,
        seed=seed, device=device, resources=resources, **_engine_keywords("compress", engine),
    )


@_docstrings.shares
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
    """The sweep graph `run` would execute, planned for the budgets, without running it.

    No site's data is read: only shapes and types. The session (default: the process's)
    keeps the plan for a `run` with the same arguments.

    Parameters
    ----------
    *trains : sequences of arrays, or quimb MPS/MPO objects
        The stack, as `src` takes it.
    {sketch_parameters}
    prefetch, batch_cols, session
        As `run` takes them.

    Returns
    -------
    Graph
        Its tasks (op, site, columns, flops, bytes, lane, device, step), the plan's tiers
        and batch, and ``to_dot()``.

    Raises
    ------
    {raises}

    Examples
    --------
    >>> import quimb.tensor as qtn, srcflow
    >>> g = srcflow.graph(qtn.MPO_ham_heis(8), qtn.MPS_rand_state(8, 4), chi_out=4)
    >>> g.tiers[:2]
    ['Device', 'Device']
    """
    engine = EngineOptions(prefetch=prefetch, batch_cols=batch_cols)
    on = _session(session)
    request, _ = _request(
        trains, chi_out, cutoff, oversample, dtype, 0, device, resources, engine
    )
    summary, dot = on._call(_core.graph, request)
    return Graph.of(json.loads(summary), dot)


def _list(train: object, index: int) -> list:
    """The site arrays of `train` (train `index` of the stack), a list or a quimb object."""
    if _trains.is_quimb(train):
        return _trains.from_quimb(train, index)
    sites = list(train)
    _trains.refuse_quimb_tensors(sites, index)
    return sites
