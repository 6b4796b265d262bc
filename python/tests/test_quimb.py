"""quimb objects in, a quimb object of the same kind out, equal to the list form's output."""

from __future__ import annotations

import numpy as np
import pytest
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


def test_a_quimb_mps_keeps_its_own_index_and_tag_names(rng):
    psi = qtn.MatrixProductState(
        random_train(rng, "mps", 6, 2, 3, "complex128"), site_ind_id="s{}", site_tag_id="Q{}"
    )
    mpo = qtn.MatrixProductOperator(
        random_train(rng, "mpo", 6, 2, 2, "complex128"), upper_ind_id="u{}", lower_ind_id="d{}"
    )
    out = srcflow.apply(mpo, psi, 6, seed=3)
    assert (out.site_ind_id, out.site_tag_id) == ("s{}", "Q{}")
    overlap = psi.H @ out
    assert np.ndim(overlap) == 0
    exact = psi.H @ mpo.apply(psi)
    assert abs(overlap - exact) < 1e-10 * abs(exact)


def test_a_quimb_mpo_product_keeps_the_names_of_the_mpo_it_acts_on_as_quimb_does(rng):
    a = qtn.MatrixProductOperator(
        random_train(rng, "mpo", 5, 2, 2, "float64"), upper_ind_id="u{}", lower_ind_id="d{}"
    )
    b = qtn.MatrixProductOperator(
        random_train(rng, "mpo", 5, 2, 2, "float64"),
        upper_ind_id="x{}", lower_ind_id="y{}", site_tag_id="T{}",
    )
    out = srcflow.apply(a, b, 8, seed=1)
    quimb_out = a.apply(b)
    names = ("upper_ind_id", "lower_ind_id", "site_tag_id")
    assert [getattr(out, n) for n in names] == ["x{}", "y{}", "T{}"]
    assert [getattr(quimb_out, n) for n in names[:2]] == ["x{}", "y{}"]
    assert abs((out.H @ quimb_out) - (quimb_out.H @ quimb_out)) < 1e-9 * abs(quimb_out.H @ quimb_out)


def test_a_leading_quimb_bra_keeps_its_names(rng):
    bra = qtn.MatrixProductState(random_train(rng, "mps", 5, 2, 3, "float64"), site_ind_id="b{}")
    mpo = random_train(rng, "mpo", 5, 2, 2, "float64")
    out = srcflow.src(bra, mpo, chi_out=6, seed=2)
    assert out.site_ind_id == "b{}"


def test_a_periodic_quimb_mps_is_refused_by_name():
    psi = qtn.MPS_rand_state(6, 3, cyclic=True)
    with pytest.raises(ValueError, match=r"Train 0 is a periodic quimb .*cyclic=True.*open boundary"):
        srcflow.compress(psi, 4)


def test_the_inputs_exponents_are_honoured_and_the_output_keeps_their_sum_as_quimb_does():
    psi = qtn.MPS_rand_state(8, bond_dim=4, seed=1)
    H = qtn.MPO_rand_herm(8, bond_dim=3, seed=2)
    scaled_psi, scaled_H = psi.copy(), H.copy()
    scaled_psi.multiply_(1e3, spread_over="all")
    scaled_psi.equalize_norms_(1.0)
    scaled_H.equalize_norms_(1.0)
    assert scaled_psi.exponent != 0 and scaled_H.exponent != 0
    out = srcflow.apply(scaled_H, scaled_psi, 16, seed=5)
    assert out.exponent == pytest.approx(scaled_psi.exponent + scaled_H.exponent)
    exact = 1e3 * H.apply(psi).to_dense()
    assert np.linalg.norm(out.to_dense() - exact) < 1e-10 * np.linalg.norm(exact)
    quimbs = qtn.tensor_network_1d_compress(
        scaled_psi.gate_with_op_lazy(scaled_H), method="src", max_bond=16, seed=5
    )
    assert out.exponent == pytest.approx(quimbs.exponent)


def test_a_list_of_quimb_tensors_is_refused_saying_what_to_pass():
    psi = qtn.MPS_rand_state(6, bond_dim=4, seed=1)
    with pytest.raises(TypeError, match=r"train 0, site 0 is a quimb Tensor.*\.data"):
        srcflow.compress(list(psi), 4)
