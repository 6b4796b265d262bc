"""Checkpoints from Python: a call with `Resources(checkpoint=...)` returns the plain call's
output and removes its folder; a call killed from outside (SIGKILL, as a job's time limit or a
node failure kills it) and made again with `seed=None` resumes with the seed its checkpoint
kept and returns that seed's output, bit for bit; a checkpoint of another call is refused,
naming what differs, and kept."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import srcflow
from conftest import random_train

TRAINS = textwrap.dedent(
    """
    import numpy as np
    rng = np.random.default_rng(0)
    n, bond = 300, 24
    def site(shape, legs):
        return rng.standard_normal(shape) / np.sqrt(np.prod(shape[:legs]))
    mps = [site(s, 1) for s in [(bond, 2)] + [(bond, bond, 2)] * (n - 2) + [(bond, 2)]]
    mpo = [site(s, 1) for s in [(3, 2, 2)] + [(3, 3, 2, 2)] * (n - 2) + [(3, 2, 2)]]
    """
)

KILLED_CALL = TRAINS + textwrap.dedent(
    """
    import sys
    import srcflow
    resources = srcflow.Resources(checkpoint=sys.argv[1])
    srcflow.src(mpo, mps, chi_out=bond, threads=1, resources=resources)
    """
)


def trains():
    """The MPO and MPS the killed call computes with."""
    scope = {}
    exec(TRAINS, scope)
    return scope["mpo"], scope["mps"], scope["bond"]


def killed_call(checkpoint, values):
    """Starts KILLED_CALL with a checkpoint in `checkpoint`, kills it (SIGKILL) once its
    journal records `values` values kept, and waits for it."""
    child = subprocess.Popen([sys.executable, "-c", KILLED_CALL, str(checkpoint)])
    journal = checkpoint / "journal.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and child.poll() is None:
        if journal.exists() and kept_values(journal) >= values:
            break
        time.sleep(0.002)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL, "the call ended before it was killed"


def kept_values(journal):
    """The values the checkpoint journal at `journal` records as kept."""
    return sum(line.startswith('{"Kept"') for line in journal.read_text().splitlines())


def same(a, b):
    """True when the trains `a` and `b` are finite and bitwise equal."""
    finite = all(np.isfinite(core).all() for core in a)
    return finite and len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))


def test_a_checkpointed_call_returns_the_plain_output_and_removes_its_folder(tmp_path):
    mpo, mps, bond = trains()
    plain = srcflow.src(mpo, mps, chi_out=bond, seed=4)
    folder = tmp_path / "run.ckpt"
    kept = srcflow.src(mpo, mps, chi_out=bond, seed=4, resources=srcflow.Resources(checkpoint=folder))
    assert same(plain, kept)
    assert not folder.exists()


def test_a_killed_call_made_again_resumes_with_its_seed_bitwise(tmp_path):
    folder = tmp_path / "run.ckpt"
    killed_call(folder, 200)
    seed = json.loads((folder / "identity.json").read_text())["seed"]
    mpo, mps, bond = trains()
    resumed = srcflow.src(mpo, mps, chi_out=bond, threads=1,
                          resources=srcflow.Resources(checkpoint=folder))
    assert not folder.exists()
    plain = srcflow.src(mpo, mps, chi_out=bond, seed=seed, threads=1)
    assert same(plain, resumed)


def test_a_checkpoint_of_another_call_is_refused_and_kept(tmp_path):
    folder = tmp_path / "run.ckpt"
    killed_call(folder, 20)
    kept = sorted(os.listdir(folder))
    mpo, mps, bond = trains()
    with pytest.raises(
        srcflow.CheckpointMismatchError, match=r"chi_out 24 there, 12 here.*`Resources.checkpoint`"
    ) as raised:
        srcflow.src(mpo, mps, chi_out=12, threads=1, resources=srcflow.Resources(checkpoint=folder))
    assert isinstance(raised.value, ValueError)
    assert sorted(os.listdir(folder)) == kept


def test_a_checkpoint_kept_by_sites_or_time_returns_the_plain_output(tmp_path):
    mpo, mps, bond = trains()
    plain = srcflow.src(mpo, mps, chi_out=bond, seed=4)
    for every in (5, "0.5s", "2h"):
        folder = tmp_path / f"every-{every}.ckpt"
        resources = srcflow.Resources(checkpoint=folder, checkpoint_every=every)
        assert same(plain, srcflow.src(mpo, mps, chi_out=bond, seed=4, resources=resources))
        assert not folder.exists()


def test_a_bad_checkpoint_interval_is_refused_by_name(tmp_path):
    folder = tmp_path / "run.ckpt"
    with pytest.raises(ValueError, match="needs `Resources.checkpoint`"):
        srcflow.Resources(checkpoint_every=3)
    with pytest.raises(ValueError, match="at least 1 site"):
        srcflow.Resources(checkpoint=folder, checkpoint_every=0)
    with pytest.raises(TypeError, match="found float"):
        srcflow.Resources(checkpoint=folder, checkpoint_every=2.5)
    mpo, mps, bond = trains()
    resources = srcflow.Resources(checkpoint=folder, checkpoint_every="ten minutes")
    with pytest.raises(ValueError, match="`Resources.checkpoint_every`.*'ten minutes'"):
        srcflow.src(mpo, mps, chi_out=bond, resources=resources)
    assert not folder.exists()


def test_the_scratch_folder_a_killed_call_left_is_removed_by_the_next_call(tmp_path, rng):
    stale = tmp_path / "srcflow-scratch-1-1"
    stale.mkdir()
    (stale / ".lock").touch()
    (stale / "env-00003-0-32.bin").write_bytes(bytes(4096))
    mpo = random_train(rng, "mpo", 6, 2, 3, "float64")
    mps = random_train(rng, "mps", 6, 2, 4, "float64")
    srcflow.src(mpo, mps, chi_out=4, seed=1, resources=srcflow.Resources(scratch_dir=tmp_path))
    assert list(tmp_path.iterdir()) == []
