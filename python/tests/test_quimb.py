"""quimb objects in, a quimb object of the same kind out, equal to the list form's output."""

from __future__ import annotations

import numpy as np
import quimb.tensor as qtn

import srcflow
from conftest import random_train


def test_an_mpo_applied_to_a_quimb_mps_gives_a_quimb_mps(rng):
    mpo = random_train(rng, "mpo", 6, 2, 3, "complex128")
    mps = random_train(rng, "mps", 6, 2, 4, "complex128")
    out = srcflow.apply(qtn.MatrixProductOperator(mpo), qtn.MatrixProductState(mps), 8, seed=4)
    assert isinstance(out, qtn.MatrixProductState)
    plain = srcflow.apply(mpo, mps, 8, seed=4)
    assert all(np.array_equal(a, b) for a, b in zip(out.arrays, plain))


def test_a_quimb_mpo_product_gives_a_quimb_mpo(rng):
    a = qtn.MatrixProductOperator(random_train(rng, "mpo", 5, 2, 3, "float64"))
    b = qtn.MatrixProductOperator(random_train(rng, "mpo", 5, 2, 2, "float64"))
    out = srcflow.apply(a, b, 16, seed=1)
    assert isinstance(out, qtn.MatrixProductOperator)
    exact = a.apply(b).to_dense()
    assert np.linalg.norm(out.to_dense() - exact) / np.linalg.norm(exact) < 1e-10


def test_a_quimb_mps_whose_tensors_hold_their_legs_in_another_order_is_read_by_name(rng):
    mps = qtn.MatrixProductState(random_train(rng, "mps", 6, 2, 3, "float64"))
    shuffled = mps.copy()
    for tensor in shuffled:
        tensor.transpose_(*reversed(tensor.inds))
    out = srcflow.compress(shuffled, 8, seed=2)
    assert np.allclose(out.to_dense(), mps.to_dense(), atol=1e-10)
