"""srcflow checks its arguments as src-method does: on the same bad call, the same exception
class and message."""

from __future__ import annotations

import numpy as np
import pytest
import src_method

import srcflow
from conftest import random_train


def raised(call):
    """The class and message `call` raised (None when it returned)."""
    try:
        call()
    except Exception as error:  # noqa: BLE001 (the class is what is compared)
        return type(error), str(error)
    return None


def both(make_call):
    """What the same call raised from srcflow and from src-method."""
    return raised(lambda: make_call(srcflow)), raised(lambda: make_call(src_method))


@pytest.fixture
def stack(rng):
    """An MPO on an MPS, six sites."""
    return random_train(rng, "mpo", 6, 2, 3, "float64"), random_train(rng, "mps", 6, 2, 4, "float64")


BAD_OPTIONS = [
    {"chi_out": 0},
    {"chi_out": -3},
    {"chi_out": 2.5},
    {"chi_out": True},
    {"chi_out": "8"},
    {"cutoff": -0.1},
    {"cutoff": 1.0},
    {"cutoff": "0.1"},
    {"oversample": 0.5},
    {"oversample": float("inf")},
    {"oversample": True},
    {"device": "tpu"},
    {"seed": -1},
]


@pytest.mark.parametrize("options", BAD_OPTIONS, ids=lambda o: repr(o))
def test_a_bad_option_raises_what_src_method_raises(stack, options):
    arguments = {"chi_out": 4, **options}
    ours, theirs = both(lambda m: m.src(*stack, **arguments))
    assert theirs is not None
    assert ours[0] is theirs[0], (ours, theirs)
    if "seed" not in options:
        assert ours[1] == theirs[1]


def test_numpy_integers_are_a_chi_out(rng, stack):
    output = srcflow.src(*stack, chi_out=np.int64(4), seed=1)
    assert max(core.shape[0] for core in output) <= 4


def periodic(train):
    """`train` with a bond added to its boundary sites (ranks of a periodic train)."""
    return [core[np.newaxis] if i in (0, len(train) - 1) else core for i, core in enumerate(train)]


def bad_stacks(rng):
    """Stacks src-method refuses, by name."""
    mpo = lambda sites=6, phys=2: random_train(rng, "mpo", sites, phys, 3, "float64")  # noqa: E731
    mps = lambda sites=6, phys=2: random_train(rng, "mps", sites, phys, 3, "float64")  # noqa: E731
    return {
        "empty": [],
        "unknown layout": [[np.zeros((2, 2, 2, 2, 2))] * 6],
        "an MPS in the middle": [mpo(), mps(), mpo()],
        "an MPS at both ends": [mps(), mps()],
        "periodic": [periodic(mpo()), mps()],
        "lengths differ": [mpo(6), mps(5)],
        "physical dimensions differ": [mpo(6, 3), mps(6, 2)],
        "one site": [[np.ones((2, 2))]],
        "an empty train": [[]],
    }


@pytest.mark.parametrize("name", list(bad_stacks(np.random.default_rng(0))))
def test_a_bad_stack_raises_what_src_method_raises(rng, name):
    trains = bad_stacks(rng)[name]
    ours, theirs = both(lambda m: m.src(*trains, chi_out=4))
    assert theirs is not None
    assert ours == theirs


def test_apply_refuses_what_src_method_refuses(rng):
    mps = random_train(rng, "mps", 6, 2, 3, "float64")
    ours, theirs = both(lambda m: m.apply(mps, mps, 4))
    assert theirs is not None and ours == theirs


BAD_RESOURCES = [
    {"gpu_memory": "36XB"},
    {"gpu_memory": -1},
    {"host_memory": 3.5},
    {"host_memory": True},
    {"devices": 0},
    {"devices": [0, 0]},
    {"devices": [-1]},
    {"devices": "0"},
    {"devices": [True]},
    {"devices": []},
    {"devices": np.array([0, 1])},
    {"devices": {0, 1}},
    {"devices": 2.0},
]


@pytest.mark.parametrize("fields", BAD_RESOURCES, ids=lambda f: repr(f))
def test_bad_resources_raise_what_src_method_raises(fields):
    ours = raised(lambda: srcflow.Resources(**fields))
    theirs = raised(lambda: src_method.Resources(**fields))
    assert theirs is not None and ours == theirs


def test_sizes_are_read_as_src_method_reads_them():
    for size in ["36GB", "36GiB", " 1.5 MB ", 10**9]:
        assert srcflow.Resources(gpu_memory=size).request()["device_memory"] == (
            src_method._plan.parse_size(size)
        )


def test_a_gpu_where_cuda_is_missing_raises_an_import_error_as_src_method_does(stack):
    ours, theirs = both(lambda m: m.src(*stack, chi_out=4, device="gpu"))
    if ours is None:
        pytest.skip("CUDA is here")
    assert issubclass(theirs[0], ImportError), theirs  # CuPy missing
    assert issubclass(ours[0], ImportError), ours
    assert ours[0] is srcflow.BackendUnavailableError and "CUDA" in ours[1]


@pytest.mark.parametrize("name", ["threads", "batch_cols"])
def test_srcflows_own_integer_options_name_the_culprit(stack, name):
    with pytest.raises(ValueError, match=f"{name} must be positive"):
        srcflow.src(*stack, chi_out=4, **{name: 0})
    with pytest.raises(TypeError, match=f"{name} must be an integer"):
        srcflow.src(*stack, chi_out=4, **{name: 1.5})


def test_an_unknown_prefetch_policy_is_a_value_error_naming_it(stack):
    with pytest.raises(ValueError, match="sometimes"):
        srcflow.src(*stack, chi_out=4, prefetch="sometimes")


def test_seeds_from_2_to_the_64_are_refused_not_wrapped(stack):
    with pytest.raises(ValueError, match=r"seed must be below 2\*\*64"):
        srcflow.src(*stack, chi_out=4, seed=2**64)
    assert np.array_equal(
        srcflow.src(*stack, chi_out=4, seed=2**64 - 1)[1],
        srcflow.src(*stack, chi_out=4, seed=2**64 - 1)[1],
    )


def test_a_negative_seed_raises_what_src_method_raises_with_a_note_naming_seed(stack):
    with pytest.raises(ValueError) as raised_here:
        srcflow.src(*stack, chi_out=4, seed=-1)
    assert "srcflow: raised for the argument `seed`" in raised_here.value.__notes__


@pytest.mark.parametrize(
    "call",
    [
        lambda stack: srcflow.src(*stack, chi_out=2**64),
        lambda stack: srcflow.Resources(host_memory=2**80),
        lambda stack: srcflow.Resources(gpu_memory="2000000000TB"),
    ],
    ids=["chi_out", "host_memory", "gpu_memory"],
)
def test_numbers_beyond_64_bits_name_their_argument(stack, call):
    with pytest.raises(ValueError) as raised_here:
        call(stack)
    name = ["chi_out", "host_memory", "gpu_memory"]
    assert any(n in str(raised_here.value) for n in name), raised_here.value


def test_a_size_with_a_one_letter_unit_is_binary_as_the_command_line_reads_it():
    assert srcflow.Resources(host_memory="36G").request()["host_memory"] == 36 * 2**30
    assert srcflow.Resources(gpu_memory="512m").request()["device_memory"] == 512 * 2**20


def test_a_huge_device_count_is_refused_before_any_list_of_devices_is_made():
    with pytest.raises(ValueError, match="more than the 1024 devices"):
        srcflow.Resources(devices=10**9)
    with pytest.raises(ValueError, match="more than the 1024 devices"):
        srcflow.Resources(devices=range(2000))
