"""The engine from Python: the graph, the report, the trace, logging, errors as exceptions,
and Ctrl-C."""

from __future__ import annotations

import json
import logging
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


@pytest.fixture
def stack(rng):
    """An MPO on an MPS, eight sites."""
    return random_train(rng, "mpo", 8, 2, 3, "complex128"), random_train(rng, "mps", 8, 2, 6, "complex128")


def test_the_graph_shows_the_tasks_a_run_executes(stack):
    graph = srcflow.graph(*stack, chi_out=8)
    ops = {task.op for task in graph.tasks}
    assert {"read", "env", "qr", "write"} <= ops, ops
    assert graph.to_dot().startswith("digraph")
    assert len(graph.tiers) == 7 and set(graph.tiers) == {"Device"}
    report = srcflow.run(*stack, chi_out=8, seed=1).report
    assert graph.total_flops() == pytest.approx(report["flops"])


def test_the_report_is_a_dict_of_the_run(stack):
    report = srcflow.run(*stack, chi_out=8, seed=1).report
    assert report["sites"] == 8 and report["chi_out"] == 8 and report["backend"] == "cpu"
    assert report["wall_s"] > 0 and report["environments"] == {"device": 7}


def test_a_trace_is_written_for_perfetto(tmp_path, stack):
    path = tmp_path / "run.json"
    srcflow.src(*stack, chi_out=8, seed=1, trace=path)
    events = json.loads(path.read_text())["traceEvents"]
    assert any(event.get("cat") == "env" for event in events)


def test_budgets_that_spill_put_environments_off_the_device(rng, tmp_path):
    mpo = random_train(rng, "mpo", 12, 2, 4, "float64")
    mps = random_train(rng, "mps", 12, 2, 32, "float64")
    tight = srcflow.Resources(gpu_memory=400_000, scratch_dir=tmp_path)
    graph = srcflow.graph(mpo, mps, chi_out=32, resources=tight)
    assert "Host" in graph.tiers
    run = srcflow.run(mpo, mps, chi_out=32, seed=2, resources=tight)
    assert run.report["environments"].get("host", 0) > 0
    roomy = srcflow.src(mpo, mps, chi_out=32, seed=2)
    assert all(np.allclose(a, b) for a, b in zip(run.output, roomy))


def test_the_engine_logs_under_the_logger_srcflow(caplog, stack):
    with caplog.at_level(logging.INFO, logger="srcflow"):
        srcflow.src(*stack, chi_out=8, seed=1)
    messages = [r.getMessage() for r in caplog.records if r.name == "srcflow"]
    assert any(m.startswith("sweep starts") for m in messages), messages
    assert any(m.startswith("sweep done") for m in messages), messages


def test_a_quiet_logger_hears_nothing(caplog, stack):
    with caplog.at_level(logging.WARNING, logger="srcflow"):
        srcflow.src(*stack, chi_out=8, seed=1)
    assert not [r for r in caplog.records if r.name == "srcflow"]


def test_a_bond_that_does_not_match_is_a_value_error_naming_the_train_and_site(rng, stack):
    mpo, mps = stack
    mps = list(mps)
    mps[3] = random_train(rng, "mps", 8, 2, 5, "complex128")[3]
    with pytest.raises(ValueError, match=r"train 1.*site [34]"):
        srcflow.src(mpo, mps, chi_out=8)


def test_budgets_too_small_are_a_value_error_naming_the_argument(stack):
    with pytest.raises(srcflow.DoesNotFitError, match=r"Resources.gpu_memory") as raised:
        srcflow.src(*stack, chi_out=8, resources=srcflow.Resources(gpu_memory=1000))
    assert isinstance(raised.value, ValueError)
    assert "more than the budget of 1.00 kB" in str(raised.value), raised.value


def test_a_site_that_cannot_be_read_raises_its_own_exception_naming_the_site(stack):
    class Broken:
        shape, dtype, ndim = (6, 6, 2), np.dtype("complex128"), 3

        def __array__(self, dtype=None, copy=None):
            raise OSError("the disk is gone")

    mpo, mps = stack
    mps = list(mps)
    mps[4] = Broken()
    with pytest.raises(OSError, match="the disk is gone") as raised:
        srcflow.src(mpo, mps, chi_out=8)
    assert any("train 1, site 4" in note for note in raised.value.__notes__)


def test_an_unsupported_element_type_is_a_type_error(stack):
    mpo, mps = stack
    with pytest.raises(TypeError, match="float16|complex256|float128"):
        srcflow.src(mpo, [core.astype(np.clongdouble) for core in mps], chi_out=8)


# A run of about 4 s with environments spilled to disk under the scratch folder argv[1]; prints
# "interrupted" when Ctrl-C stops it.
LONG_RUN = textwrap.dedent(
    """
    import signal, sys
    import numpy as np
    import srcflow
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even where SIGINT came ignored
    rng = np.random.default_rng(0)
    n, bond, width = 40, 256, 12
    mps = [rng.standard_normal(s) for s in [(bond, 2)] + [(bond, bond, 2)] * (n - 2) + [(bond, 2)]]
    mpo = [rng.standard_normal(s) for s in [(width, 2, 2)] + [(width, width, 2, 2)] * (n - 2) + [(width, 2, 2)]]
    budgets = srcflow.Resources(gpu_memory="120MB", host_memory="250MB", scratch_dir=sys.argv[1])
    print("started", flush=True)
    try:
        srcflow.src(mpo, mps, chi_out=256, resources=budgets)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    """
)


def test_ctrl_c_stops_a_run_with_keyboard_interrupt_and_leaves_no_scratch(tmp_path):
    child = subprocess.Popen(
        [sys.executable, "-c", LONG_RUN, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout.readline().strip() == "started"
    deadline = time.monotonic() + 60
    while not os.listdir(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert os.listdir(tmp_path), "the run spills to its scratch folder"
    child.send_signal(signal.SIGINT)
    out, _ = child.communicate(timeout=60)
    assert "interrupted" in out
    assert os.listdir(tmp_path) == []


# A run of well over 0.1 s with progress=True; prints "done" on standard output at the end.
RUN_WITH_PROGRESS = textwrap.dedent(
    """
    import numpy as np
    import srcflow
    rng = np.random.default_rng(0)
    n, bond, width = 24, 96, 6
    mps = [rng.standard_normal(s) for s in [(bond, 2)] + [(bond, bond, 2)] * (n - 2) + [(bond, 2)]]
    mpo = [rng.standard_normal(s) for s in [(width, 2, 2)] + [(width, width, 2, 2)] * (n - 2) + [(width, 2, 2)]]
    srcflow.src(mpo, mps, chi_out=96, progress=True)
    print("done", flush=True)
    """
)


def stderr_of(code: str, on_terminal: bool) -> str:
    """What `code`, run in a child Python, writes on standard error (a terminal when asked)."""
    if not on_terminal:
        child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert child.stdout.strip() == "done", child.stderr
        return child.stderr
    import pty

    primary, secondary = pty.openpty()
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=secondary)
    os.close(secondary)
    written = b""
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # the terminal closes when the child exits
            break
        if not chunk:
            break
        written += chunk
    assert child.wait(timeout=120) == 0 and child.stdout.read().strip() == b"done"
    os.close(primary)
    return written.decode(errors="replace")


def test_progress_draws_a_line_on_a_terminal_and_clears_it():
    drawn = stderr_of(RUN_WITH_PROGRESS, on_terminal=True)
    assert "/" in drawn and " tasks, ETA " in drawn and "written to disk" in drawn, drawn
    last = drawn.rsplit("\r", 1)[-1]
    assert last == "\x1b[2K", repr(last[-200:])


def test_progress_draws_nothing_off_a_terminal():
    assert stderr_of(RUN_WITH_PROGRESS, on_terminal=False) == ""


def test_disk_choices_move_bytes_differently_and_give_the_same_output(rng, tmp_path):
    mpo = random_train(rng, "mpo", 20, 2, 8, "float64")
    mps = random_train(rng, "mps", 20, 2, 128, "float64")
    results = []
    for depth, direct in [(1, False), (5, True), (None, None)]:
        tight = srcflow.Resources(
            gpu_memory="6MB", host_memory="40MB", scratch_dir=tmp_path, io_depth=depth,
            direct_io=direct,
        )
        run = srcflow.run(mpo, mps, chi_out=128, seed=3, resources=tight)
        assert run.report["environments"].get("disk", 0) > 0, run.report["environments"]
        results.append(run.output)
    assert all(np.array_equal(a, b) for a, b in zip(results[0], results[1]))
    assert all(np.array_equal(a, b) for a, b in zip(results[0], results[2]))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("fields", "error", "culprit"),
    [
        ({"io_depth": 0}, ValueError, "between 1 and 64"),
        ({"io_depth": 65}, ValueError, "between 1 and 64"),
        ({"io_depth": "8"}, TypeError, "number of requests"),
        ({"io_depth": True}, TypeError, "number of requests"),
        ({"direct_io": "always"}, TypeError, "True, False or None"),
    ],
)
def test_bad_disk_choices_are_refused_naming_the_field(fields, error, culprit):
    with pytest.raises(error, match=culprit):
        srcflow.Resources(**fields)
