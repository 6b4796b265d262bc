"""Sessions: calls reuse the default session's threads and plans, a warm session gives bitwise
the output of a new one, two threads on one session take turns, a failed or interrupted call
leaves the session usable, a closed session refuses calls, and a forked child computes on a
session of its own."""

from __future__ import annotations

import gc
import multiprocessing
import signal
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import srcflow
from conftest import random_train


@pytest.fixture
def stack(rng):
    """An MPO on an MPS, eight sites."""
    return random_train(rng, "mpo", 8, 2, 3, "complex128"), random_train(rng, "mps", 8, 2, 6, "complex128")


def test_calls_share_the_default_session_and_reuse_its_plans(stack):
    session = srcflow.default_session()
    srcflow.src(*stack, chi_out=8, seed=1)
    before = session.stats()
    srcflow.src(*stack, chi_out=8, seed=2)
    after = session.stats()
    assert srcflow.default_session() is session
    assert after["plan_hits"] == before["plan_hits"] + 1
    assert after["plan_misses"] == before["plan_misses"]
    assert after["backends"] >= 1


def test_a_warm_session_gives_bitwise_the_output_of_a_new_one(stack):
    with srcflow.Session() as new:
        expected = srcflow.src(*stack, chi_out=6, seed=3, session=new)
    for _ in range(3):
        got = srcflow.src(*stack, chi_out=6, seed=3)
        assert all(np.array_equal(a, b) for a, b in zip(got, expected))


def test_two_threads_on_one_session_take_turns_and_each_gets_its_own_answer(rng, monkeypatch):
    stacks = [
        (random_train(rng, "mpo", 10, 2, 3, "complex128"), random_train(rng, "mps", 10, 2, 8, "complex128"))
        for _ in range(2)
    ]
    expected = [srcflow.src(*s, chi_out=8, seed=4) for s in stacks]
    running, most, count = [0], [0], threading.Lock()
    real_run = srcflow._core.run

    def counted(*args, **kwargs):
        with count:
            running[0] += 1
            most[0] = max(most[0], running[0])
        try:
            return real_run(*args, **kwargs)
        finally:
            with count:
                running[0] -= 1

    monkeypatch.setattr(srcflow._core, "run", counted)
    results: dict[int, list] = {0: [], 1: []}
    session = srcflow.Session()

    def calls(which: int) -> None:
        for _ in range(10):
            results[which].append(srcflow.src(*stacks[which], chi_out=8, seed=4, session=session))

    threads = [threading.Thread(target=calls, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert most[0] == 1, "calls on one session never overlap"
    for which in range(2):
        assert len(results[which]) == 10
        for got in results[which]:
            assert all(np.array_equal(a, b) for a, b in zip(got, expected[which]))
    session.close()


def test_a_closed_session_refuses_calls(stack):
    with srcflow.Session() as session:
        srcflow.src(*stack, chi_out=8, session=session)
        assert session.stats()["plans"] == 1
    assert session.closed
    session.close()
    with pytest.raises(ValueError, match="closed"):
        srcflow.src(*stack, chi_out=8, session=session)
    with pytest.raises(TypeError, match="srcflow.Session"):
        srcflow.src(*stack, chi_out=8, session="default")


def test_trim_forgets_the_plans(stack):
    session = srcflow.Session()
    srcflow.src(*stack, chi_out=8, session=session)
    session.trim()
    stats = session.stats()
    assert stats["plans"] == 0 and stats["backends"] == 1
    srcflow.src(*stack, chi_out=8, session=session)
    assert session.stats()["plan_misses"] == 2


def test_a_failed_call_leaves_the_session_usable(stack):
    class Broken:
        shape, dtype, ndim = (6, 6, 2), np.dtype("complex128"), 3

        def __array__(self, dtype=None, copy=None):
            raise OSError("the disk is gone")

    session = srcflow.Session()
    expected = srcflow.src(*stack, chi_out=8, seed=5, session=session)
    mpo, mps = stack
    broken = list(mps)
    broken[4] = Broken()
    with pytest.raises(OSError, match="the disk is gone"):
        srcflow.src(mpo, broken, chi_out=8, seed=5, session=session)
    with pytest.raises(ValueError):
        srcflow.src(mpo, mps[:-1], chi_out=8, session=session)
    got = srcflow.src(*stack, chi_out=8, seed=5, session=session)
    assert all(np.array_equal(a, b) for a, b in zip(got, expected))


class _Unreadable:
    """A site of shape `shape` whose read raises OSError."""

    def __init__(self, shape):
        self.shape, self.dtype, self.ndim = shape, np.dtype("complex128"), len(shape)

    def __array__(self, dtype=None, copy=None):
        raise OSError("the disk is gone")


def test_a_failed_call_gives_back_the_memory_it_held(rng):
    mpo = random_train(rng, "mpo", 8, 2, 4, "complex128")
    mps = random_train(rng, "mps", 8, 2, 256, "complex128")
    session = srcflow.Session()
    report = srcflow.run(mpo, mps, chi_out=256, session=session).report
    assert report["blocks_mapped"] > 0, "the run's buffers come from the block cache"
    gc.collect()  # buffers of earlier tests that only the cycle collector frees
    before = session.stats()
    broken = list(mps)
    broken[6] = _Unreadable((256, 256, 2))
    with pytest.raises(OSError, match="the disk is gone"):
        srcflow.src(mpo, broken, chi_out=256, session=session)
    after = session.stats()
    # The GEMM library reserves a 960 MB workspace per thread (virtual, counted as live): equal
    # only because a run joins its threads, with their thread-locals, before it returns.
    assert after["live_bytes"] == before["live_bytes"], (before, after)
    assert after["cached_bytes"] == 0
    got = srcflow.run(mpo, mps, chi_out=256, session=session)
    assert got.report["blocks_mapped"] > 0


def _product_in_child(stack) -> list:
    """`src` in a forked child (multiprocessing's worker)."""
    return srcflow.src(*stack, chi_out=8, seed=6)


def test_a_forked_child_computes_on_a_session_of_its_own(stack):
    expected = srcflow.src(*stack, chi_out=8, seed=6)
    with multiprocessing.get_context("fork").Pool(1) as pool:
        got = pool.apply_async(_product_in_child, (stack,)).get(timeout=120)
    assert all(np.array_equal(a, b) for a, b in zip(got, expected))


# A run of tiny tasks (run on one thread, no lanes) lasting several seconds; prints
# "interrupted" when Ctrl-C stops it, then "again" once a call on the same session succeeds.
LONG_INLINE_RUN = textwrap.dedent(
    """
    import signal
    import numpy as np
    import srcflow
    signal.signal(signal.SIGINT, signal.default_int_handler)
    rng = np.random.default_rng(0)
    n, bond = 16000, 32
    shapes = [(bond, 2)] + [(bond, bond, 2)] * (n - 2) + [(bond, 2)]
    # Each site scaled so that the state's norm stays near 1 over thousands of sites.
    mps = [rng.standard_normal(s) / np.sqrt(np.prod(s[1:])) for s in shapes]
    mpo = [np.eye(2)[None]] + [np.eye(2)[None, None]] * (n - 2) + [np.eye(2)[None]]
    print("started", flush=True)
    try:
        srcflow.src(mpo, mps, chi_out=bond, threads=1)
        print("finished", flush=True)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    small = srcflow.src([*mpo[:3], mpo[-1]], [*mps[:3], mps[-1]], chi_out=4)
    print("again" if len(small) == 4 else "broken", flush=True)
    """
)


def test_ctrl_c_stops_a_run_of_tiny_tasks_and_the_session_runs_again():
    child = subprocess.Popen([sys.executable, "-c", LONG_INLINE_RUN], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "started"
    threading.Event().wait(2.0)
    child.send_signal(signal.SIGINT)
    out, _ = child.communicate(timeout=120)
    assert out.split() == ["interrupted", "again"], out


# A session busy with a long call in another thread when the process forks: the child's next
# call on that session must return (a fresh session), never wait for the thread it lacks, nor
# for a lock or a once-cell that thread held at the fork. The process forks again and again
# while the call reads its arguments, builds its graph (every kernel's dry run) and runs, so
# that some fork lands while the thread is inside each of them.
FORKS_WHILE_BUSY = 30
FORK_WHILE_BUSY = textwrap.dedent(
    f"""
    import os, signal, subprocess, sys, threading, time
    import numpy as np
    import srcflow
    rng = np.random.default_rng(0)
    n, bond = 4000, 32
    shapes = [(bond, 2)] + [(bond, bond, 2)] * (n - 2) + [(bond, 2)]
    # Each site scaled so that the state's norm stays near 1 over thousands of sites.
    mps = [rng.standard_normal(s) / np.sqrt(np.prod(s[1:])) for s in shapes]
    mpo = [np.eye(2)[None]] + [np.eye(2)[None, None]] * (n - 2) + [np.eye(2)[None]]
    session = srcflow.Session()
    busy = threading.Thread(
        target=lambda: srcflow.apply(mpo, mps, chi_out=bond, seed=1, session=session),
        daemon=True,
    )
    # Processes spinning on every core: the busy thread is then often preempted inside what
    # it holds, as on a loaded machine.
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count())]
    busy.start()
    while not session._turn.locked():
        time.sleep(0.001)
    children = []
    for fork in range({FORKS_WHILE_BUSY}):
        pid = os.fork()
        if pid == 0:
            signal.alarm(60)
            small = [rng.standard_normal(s) for s in [(3, 2), (3, 3, 2), (3, 3, 2), (3, 2)]]
            out = srcflow.compress(small, chi_out=2, seed=3, session=session)
            # One write, which a pipe keeps whole (print's pieces interleave between children).
            os.write(1, f"child computed {{len(out)}}\\n".encode())
            os._exit(0)
        children.append(pid)
        time.sleep(0.001 * fork)
    for pid in children:
        _, status = os.waitpid(pid, 0)
        print("child status", os.waitstatus_to_exitcode(status), flush=True)
    for spinner in spinners:
        spinner.kill()
    os._exit(0)
    """
)


def test_children_forked_while_a_session_is_busy_get_a_fresh_session_not_a_hang():
    done = subprocess.run(
        [sys.executable, "-c", FORK_WHILE_BUSY], capture_output=True, text=True, timeout=600
    )
    lines = done.stdout.splitlines()
    assert lines.count("child computed 4") == FORKS_WHILE_BUSY, (done.stdout, done.stderr)
    assert lines.count("child status 0") == FORKS_WHILE_BUSY, (done.stdout, done.stderr)
