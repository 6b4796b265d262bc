"""Trains as users give them: lists of array-likes in quimb's default layout, or quimb's
MatrixProductState / MatrixProductOperator objects; checked as src-method checks them."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# Rank of a boundary site, which tells an MPS from an MPO (as in src-method).
_BOUNDARY_RANK = {"mps": 2, "mpo": 3}
# The element types srcflow computes in.
_SUPPORTED = {np.dtype(t) for t in ("float32", "float64", "complex64", "complex128")}


def is_quimb(train: object) -> bool:
    """True for a quimb MatrixProductState or MatrixProductOperator."""
    return type(train).__module__.startswith("quimb") and hasattr(train, "L")


def from_quimb(train: object, index: int) -> list[np.ndarray]:
    """The site arrays of a quimb MPS or MPO (train `index` of the stack) in quimb's default
    layout (left bond, right bond, then the physical legs: upper before lower), whatever order
    its tensors hold them in; ValueError for a periodic one."""
    if getattr(train, "cyclic", False):
        raise ValueError(
            f"Train {index} is a periodic quimb {type(train).__name__} (cyclic=True): only open "
            "boundary conditions are supported, as in src-method."
        )
    sites = train.L
    arrays = []
    for i in range(sites):
        bonds = ([train.bond(i - 1, i)] if i > 0 else []) + (
            [train.bond(i, i + 1)] if i + 1 < sites else []
        )
        legs = (
            [train.upper_ind(i), train.lower_ind(i)]
            if hasattr(train, "lower_ind")
            else [train.site_ind(i)]
        )
        arrays.append(train[i].transpose(*bonds, *legs).data)
    return arrays


def quimb_names(trains: Sequence, kind: str) -> dict:
    """The index and tag names the output (of `kind`) keeps, as quimb's `A.apply(B)` keeps
    B's: those of the train the product acts on (the last, or a leading MPS bra when the
    output is that bra) when it is a quimb object; quimb's defaults otherwise."""
    named = trains[0] if kind == "mps" and quimb_kind(trains[-1]) != "mps" else trains[-1]
    if quimb_kind(named) != kind:
        return {}
    if kind == "mps":
        return {"site_ind_id": named.site_ind_id, "site_tag_id": named.site_tag_id}
    return {
        "upper_ind_id": named.upper_ind_id,
        "lower_ind_id": named.lower_ind_id,
        "site_tag_id": named.site_tag_id,
    }


def quimb_kind(train: object) -> str | None:
    """"mps" or "mpo" for a quimb MPS or MPO, None for anything else."""
    if not is_quimb(train):
        return None
    return "mpo" if hasattr(train, "lower_ind_id") else "mps"


def to_quimb(arrays: list[np.ndarray], kind: str, names: dict, exponent: float) -> object:
    """A quimb object of `kind` over `arrays`, with the index and tag names `names` and the
    scale `10**exponent` kept apart, in its `exponent` (as quimb's own compressions keep it)."""
    import quimb.tensor as qtn

    if kind == "mps":
        train = qtn.MatrixProductState(arrays, **names)
    else:
        train = qtn.MatrixProductOperator(arrays, **names)
    train.exponent = exponent
    return train


def exponent_of(trains: Sequence) -> float:
    """The log10 scale the quimb objects among `trains` keep apart from their tensors (quimb's
    `exponent`, after `equalize_norms` and in boundary contractions): their product's, which
    the product of their tensors' data lacks."""
    return sum(float(getattr(t, "exponent", 0.0)) for t in trains if is_quimb(t))


def refuse_quimb_tensors(train: Sequence, index: int) -> None:
    """TypeError naming the site when the list `train` (train `index` of the stack) holds quimb
    Tensors rather than arrays."""
    for site, tensor in enumerate(train):
        if type(tensor).__module__.startswith("quimb") and hasattr(tensor, "inds"):
            raise TypeError(
                f"train {index}, site {site} is a quimb {type(tensor).__name__}, not an array: "
                "pass the MatrixProductState or MatrixProductOperator itself, or each tensor's "
                ".data in quimb's default layout."
            )


def kind_of(train: Sequence) -> str | None:
    """"mps" or "mpo" from the rank of the first site, or None."""
    if len(train) == 0:
        return None
    rank = np.ndim(train[0])
    return next((kind for kind, r in _BOUNDARY_RANK.items() if r == rank), None)


def check_stack(trains: Sequence[Sequence], kinds: list[str | None]) -> None:
    """The checks of src-method's `normalize_stack`, with its messages and classes."""
    if len(trains) == 0:
        raise ValueError("Expected at least one tensor train.")
    if None in kinds:
        raise TypeError(
            f"Unsupported tensor network layout for train {kinds.index(None)}: expected an MPS "
            "or MPO given as a list of per-site arrays (periodic boundary conditions are not "
            "supported)."
        )
    if len(kinds) > 1 and ("mps" in kinds[1:-1] or kinds[0] == kinds[-1] == "mps"):
        raise TypeError(
            f"Unsupported stack {kinds}: every train must be an MPO, except that an MPS may "
            "come first (bra) or last (ket), not both."
        )
    for index, (train, kind) in enumerate(zip(trains, kinds)):
        rank = _BOUNDARY_RANK[kind]
        expected = [rank, *[rank + 1] * (len(train) - 2), rank]
        ranks = [np.ndim(site) for site in train]
        if len(train) > 1 and ranks != expected:
            raise ValueError(
                f"Train {index} has site ranks {ranks}, expected {expected}: only open "
                "boundary conditions are supported."
            )
    sizes = [len(train) for train in trains]
    if len(set(sizes)) > 1:
        raise ValueError(f"All tensor trains must have the same number of sites, got {sizes}.")
    for i in range(len(trains) - 1):
        incoming = -1 if kinds[i + 1] == "mps" else -2
        for site, (upper, lower) in enumerate(zip(trains[i], trains[i + 1])):
            if np.shape(upper)[-1] != np.shape(lower)[incoming]:
                raise ValueError(
                    f"Physical dimension mismatch at site {site} between trains {i} and "
                    f"{i + 1}: {np.shape(upper)[-1]} != {np.shape(lower)[incoming]}."
                )
    if sizes[0] == 1:
        raise ValueError(
            "Expected a two-site tensor train, got 1 site(s). Single-site trains are "
            "degenerate; use three or more sites for SRC."
        )


def read_dtype(site: object, train: int, index: int) -> np.dtype:
    """The type srcflow reads `site` as: its own for the four types srcflow computes in,
    float64 for integers and booleans (as src-method promotes them); TypeError naming the site
    for any other (float16, longdouble, ...)."""
    dtype = np.dtype(getattr(site, "dtype", None) or np.asarray(site).dtype)
    if dtype.kind in "biu":
        return np.dtype(np.float64)
    if dtype not in _SUPPORTED:
        raise TypeError(
            f"train {train}, site {index}: srcflow computes in float32, float64, complex64 or "
            f"complex128, found {dtype}; convert the site first (for example "
            f"site.astype(np.{'complex64' if dtype.kind == 'c' else 'float32'}))."
        )
    return dtype


def result_dtype(dtypes: list[list[np.dtype]], dtype: object) -> np.dtype:
    """The type a run computes in and returns: the inputs' promoted with an explicit `dtype`
    (which may promote the result, never demote it), as src-method returns it; TypeError for
    an explicit `dtype` that is not one of the four srcflow computes in."""
    result = np.result_type(*(d for train in dtypes for d in train))
    if dtype is not None:
        asked = np.dtype(dtype)
        if asked not in _SUPPORTED:
            raise TypeError(
                f"dtype={asked.name!r} is not a type srcflow computes in: give float32, "
                "float64, complex64, complex128 or None (the inputs' type)."
            )
        result = np.result_type(result, asked)
    return result
