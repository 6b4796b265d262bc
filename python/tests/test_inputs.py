"""Inputs are never modified, and a memory-mapped train is read one site at a time, never
loaded whole."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import srcflow
from conftest import DTYPES, random_train


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_inputs_are_not_modified(rng, dtype):
    trains = [random_train(rng, "mps", 6, 2, 3, dtype), random_train(rng, "mpo", 6, 2, 3, dtype)]
    trains.append(random_train(rng, "mpo", 6, 2, 2, dtype))
    before = [[core.copy() for core in train] for train in trains]
    srcflow.src(*trains, chi_out=4, seed=1)
    assert all(
        np.array_equal(a, b) for train, copy in zip(trains, before) for a, b in zip(train, copy)
    )


def test_array_likes_with_the_numpy_protocol_are_read(rng):
    class Lazy:
        """A site known by its shape and dtype, read only by `np.asarray`."""

        def __init__(self, array):
            self.shape, self.dtype, self.ndim, self._array = array.shape, array.dtype, array.ndim, array
            self.reads = 0

        def __array__(self, dtype=None, copy=None):
            self.reads += 1
            return self._array if dtype is None else self._array.astype(dtype)

    mps = random_train(rng, "mps", 6, 2, 3, "float64")
    lazy = [Lazy(core) for core in mps]
    srcflow.graph(lazy, chi_out=8)
    assert all(site.reads == 0 for site in lazy), "the graph reads no site's data"
    out = srcflow.compress(lazy, 8, seed=1)
    expected = srcflow.compress(mps, 8, seed=1)
    assert all(np.array_equal(a, b) for a, b in zip(out, expected))
    assert all(site.reads >= 1 for site in lazy)


# Writes a memory-mapped MPS of 48 sites of 8 MB each (384 MB), then compresses it, printing
# the private (anonymous) memory in kB before the call, its peak during the call (sampled every
# millisecond) and the train's size. A memmap's pages read during the call are file-backed: they
# count in RSS but are not a load of the train into memory, which would be private.
MEMMAP_RUN = textwrap.dedent(
    """
    import sys, threading, time
    import numpy as np
    import srcflow

    def private_kb():
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("RssAnon"))

    folder, sites, bond = sys.argv[1], 48, 512
    shapes = [(bond, 2)] + [(bond, bond, 2)] * (sites - 2) + [(bond, 2)]
    for i, shape in enumerate(shapes):
        site = np.lib.format.open_memmap(f"{folder}/{i}.npy", "w+", np.complex128, shape)
        site[...] = 1e-3 * (i + 1)
        site.flush()
        del site
    train = [np.load(f"{folder}/{i}.npy", mmap_mode="r") for i in range(sites)]
    before, peak, running = private_kb(), [0], True

    def sample():
        while running:
            peak[0] = max(peak[0], private_kb())
            time.sleep(0.001)

    sampler = threading.Thread(target=sample)
    sampler.start()
    out = srcflow.compress(train, 4, seed=1)
    running = False
    sampler.join()
    print(before, peak[0], sum(t.nbytes for t in train) // 1024)
    """
)


def test_a_memory_mapped_train_is_never_loaded_whole(tmp_path):
    run = subprocess.run(
        [sys.executable, "-c", MEMMAP_RUN, str(tmp_path)], capture_output=True, text=True,
        check=True,
    )
    before, peak, total = map(int, run.stdout.split())
    assert peak - before < total // 4, (before, peak, total)
