"""srcflow's outputs against the dense product (NumPy), side by side with src-method's on the
same inputs: within a factor 1.5 of src-method's error, and exact when χ̄ is at least the rank."""

from __future__ import annotations

import numpy as np
import pytest
import src_method

import srcflow
from conftest import DTYPES, exact_product, random_train, relative_error

# Each stack: (kind, bond) of its trains in mathematical order, its sites and a χ̄ that truncates.
STACKS = {
    "MPO·MPS": ([("mpo", 3), ("mps", 6)], 8, 8),
    "MPO·MPO": ([("mpo", 3), ("mpo", 3)], 6, 6),
    "depth-3 stack": ([("mpo", 2), ("mpo", 2), ("mps", 4)], 7, 4),
    "bra stack": ([("mps", 4), ("mpo", 3), ("mpo", 2)], 7, 4),
}
SEEDS = [1, 2, 3]
# The error a type can resolve (its rounding on these small problems).
FLOOR = {"float32": 1e-4, "complex64": 1e-4, "float64": 1e-10, "complex128": 1e-10}


def make_stack(rng, name, dtype):
    """The trains of `name`, their kinds and the output's kind."""
    layout, sites, _ = STACKS[name]
    trains = [random_train(rng, kind, sites, 2, bond, dtype) for kind, bond in layout]
    kinds = [kind for kind, _ in layout]
    return trains, kinds, "mps" if "mps" in kinds else "mpo"


def mean_error(library, trains, exact, kind, chi_out):
    """The mean relative error of `library.src` over the seeds."""
    errors = [
        relative_error(library.src(*trains, chi_out=chi_out, seed=seed), exact, kind)
        for seed in SEEDS
    ]
    return float(np.mean(errors))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(STACKS))
def test_the_error_is_within_a_factor_1_5_of_src_methods(rng, name, dtype):
    trains, kinds, kind = make_stack(rng, name, dtype)
    exact = exact_product(trains, kinds)
    chi_out = STACKS[name][2]
    ours = mean_error(srcflow, trains, exact, kind, chi_out)
    theirs = mean_error(src_method, trains, exact, kind, chi_out)
    assert theirs > 10 * FLOOR[dtype], "the case must truncate"
    assert ours <= 1.5 * theirs + FLOOR[dtype], (ours, theirs)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(STACKS))
def test_a_chi_out_at_least_the_rank_is_exact(rng, name, dtype):
    trains, kinds, kind = make_stack(rng, name, dtype)
    output = srcflow.src(*trains, chi_out=64, seed=5)
    assert relative_error(output, exact_product(trains, kinds), kind) < FLOOR[dtype]


def bonds(train):
    """The bonds of an MPS in src-method's layout, one per cut (left edge (r, p), then (l, r, p))."""
    return [train[0].shape[0]] + [core.shape[1] for core in train[1:-1]]


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_output_has_src_methods_types_and_shapes_with_bonds_cut_to_the_possible_rank(
    rng, dtype
):
    trains, _, _ = make_stack(rng, "MPO·MPS", dtype)
    ours = srcflow.src(*trains, chi_out=8, seed=1)
    theirs = src_method.src(*trains, chi_out=8, seed=1)
    assert [a.dtype for a in ours] == [a.dtype for a in theirs]
    assert [a.shape[-1] for a in ours] == [a.shape[-1] for a in theirs]
    sites = len(ours)
    # src-method keeps χ̄ at the left edge, where d^(j+1) < χ̄ bounds the rank at cut j.
    possible = [min(2 ** (cut + 1), 2 ** (sites - cut - 1)) for cut in range(sites - 1)]
    assert bonds(ours) == [min(b, p) for b, p in zip(bonds(theirs), possible)]
    assert bonds(ours) != bonds(theirs), "the case must have a bond to cut"


def test_an_explicit_dtype_promotes_the_result(rng):
    trains, _, _ = make_stack(rng, "MPO·MPS", "float32")
    assert srcflow.src(*trains, chi_out=8, dtype="complex128")[0].dtype == np.complex128
    assert srcflow.src(*trains, chi_out=8, dtype="float32")[0].dtype == np.float32


def test_the_output_is_right_canonical(rng):
    trains, _, _ = make_stack(rng, "MPO·MPS", "complex128")
    output = srcflow.src(*trains, chi_out=8, seed=3)
    for core in output[1:]:
        matrix = core.reshape(core.shape[0], -1)
        assert np.allclose(matrix @ matrix.conj().T, np.eye(core.shape[0]), atol=1e-10)


def test_the_same_seed_gives_the_same_output(rng):
    trains, _, _ = make_stack(rng, "MPO·MPO", "float64")
    first = srcflow.src(*trains, chi_out=6, seed=11)
    again = srcflow.src(*trains, chi_out=6, seed=11)
    assert all(np.array_equal(a, b) for a, b in zip(first, again))


def test_oversampling_is_at_least_as_accurate(rng):
    trains, kinds, kind = make_stack(rng, "MPO·MPS", "float64")
    exact = exact_product(trains, kinds)
    plain = mean_error(srcflow, trains, exact, kind, 8)
    errors = [
        relative_error(srcflow.src(*trains, chi_out=8, oversample=None, seed=s), exact, kind)
        for s in SEEDS
    ]
    assert np.mean(errors) <= plain * 1.05


def test_a_cutoff_is_within_a_factor_1_5_of_src_methods_error_and_shrinks_the_bonds(rng):
    trains, kinds, kind = make_stack(rng, "MPO·MPS", "float64")
    # A decaying spectrum: each MPS core's first bond axis weighted by 1, 1/2, 1/4, …
    decay = lambda core: core * 0.5 ** np.arange(core.shape[0]).reshape(-1, *[1] * (core.ndim - 1))  # noqa: E731
    trains[1] = [decay(core) for core in trains[1]]
    exact = exact_product(trains, kinds)
    ours = srcflow.src(*trains, chi_out=12, cutoff=1e-2, seed=1)
    theirs = src_method.src(*trains, chi_out=12, cutoff=1e-2, seed=1)
    ours_error, theirs_error = relative_error(ours, exact, kind), relative_error(theirs, exact, kind)
    assert ours_error <= 1.5 * theirs_error + FLOOR["float64"], (ours_error, theirs_error)
    assert max(core.shape[0] for core in ours) < 12, "the cutoff dropped singular values"


@pytest.mark.parametrize("dtype", DTYPES)
def test_oversampled_output_has_src_methods_types_and_shapes_and_is_left_canonical(rng, dtype):
    trains, _, _ = make_stack(rng, "MPO·MPS", dtype)
    ours = srcflow.src(*trains, chi_out=8, oversample=None, seed=1)
    theirs = src_method.src(*trains, chi_out=8, oversample=None, seed=1)
    assert [(a.dtype, a.shape) for a in ours] == [(a.dtype, a.shape) for a in theirs]
    for core in ours[:-1]:
        # rows: the left bond and the physical leg; columns: the right bond.
        matrix = core.T if core.ndim == 2 else np.moveaxis(core, 1, -1).reshape(-1, core.shape[1])
        assert np.allclose(matrix.conj().T @ matrix, np.eye(matrix.shape[1]), atol=FLOOR[dtype])


def test_a_two_site_stack_is_exact_when_chi_out_is_the_rank(rng):
    trains = [random_train(rng, "mpo", 2, 2, 3, "complex128"), random_train(rng, "mps", 2, 2, 3, "complex128")]
    exact = exact_product(trains, ["mpo", "mps"])
    output = srcflow.src(*trains, chi_out=2, seed=1)
    assert relative_error(output, exact, "mps") < 1e-10
