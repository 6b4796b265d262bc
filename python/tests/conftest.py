"""Random trains in quimb layout and the dense products the tests hold srcflow to (NumPy
only: an independent reference, not srcflow's own code)."""

from __future__ import annotations

import numpy as np
import pytest

DTYPES = ["float32", "float64", "complex64", "complex128"]


def random_array(rng: np.random.Generator, shape: tuple, dtype: str) -> np.ndarray:
    """Standard normal entries (complex for a complex type)."""
    data = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        data = data + 1j * rng.standard_normal(shape)
    return data.astype(dtype)


def random_train(rng, kind: str, sites: int, phys: int, bond: int, dtype: str) -> list:
    """A random open-boundary MPS or MPO in quimb layout (l, r, then physical legs)."""
    legs = (phys,) if kind == "mps" else (phys, phys)
    shapes = [(bond, *legs)] + [(bond, bond, *legs)] * (sites - 2) + [(bond, *legs)]
    return [random_array(rng, shape, dtype) for shape in shapes]


def dense(train: list) -> np.ndarray:
    """The full tensor of a train in quimb layout: (p_0, …, p_n-1) for an MPS,
    (u_0, d_0, u_1, d_1, …) for an MPO, contracted site by site from the left."""
    whole = np.moveaxis(train[0], 0, -1)  # (*legs, right bond)
    for core in train[1:-1]:
        legs = core.ndim - 2
        whole = np.tensordot(whole, core, axes=([-1], [0]))  # (…, r, *legs)
        whole = np.moveaxis(whole, whole.ndim - legs - 1, -1)
    return np.tensordot(whole, train[-1], axes=([-1], [0]))


def dense_operator(train: list, kind: str) -> np.ndarray:
    """An MPS as a vector, an MPO as a matrix (rows: upper legs, columns: lower legs)."""
    full = dense(train)
    if kind == "mps":
        return full.reshape(-1)
    n = full.ndim // 2
    ups = [2 * i for i in range(n)]
    downs = [2 * i + 1 for i in range(n)]
    full = full.transpose(ups + downs)
    size = int(np.sqrt(full.size))
    return full.reshape(size, size)


def exact_product(trains: list, kinds: list) -> np.ndarray:
    """The dense product of a stack in mathematical order; a leading MPS is a row vector."""
    result = None
    for train, kind in zip(trains, kinds):
        part = dense_operator(train, kind)
        result = part if result is None else result @ part
    return result


def relative_error(output: list, exact: np.ndarray, kind: str) -> float:
    """‖dense(output) − exact‖ / ‖exact‖."""
    got = dense_operator(output, kind)
    return float(np.linalg.norm(got - exact) / np.linalg.norm(exact))


@pytest.fixture
def rng() -> np.random.Generator:
    """A seeded generator, fresh for each test."""
    return np.random.default_rng(20261202)
