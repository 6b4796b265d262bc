"""What a new user meets: names that say what they are, docstrings that answer, paths and
types checked before any work, and a trace readable from Python."""

from __future__ import annotations

import doctest
import importlib.metadata
import inspect
import os
import pathlib
import subprocess

import numpy as np
import pytest

import srcflow
from conftest import random_train

PUBLIC_FUNCTIONS = ["src", "apply", "compress", "run", "graph", "report", "default_session"]


@pytest.fixture
def stack(rng):
    return [random_train(rng, "mpo", 6, 2, 2, "float64"), random_train(rng, "mps", 6, 2, 3, "float64")]


def test_the_package_namespace_holds_only_what_it_exports():
    public = {name for name in dir(srcflow) if not name.startswith("_")}
    exported = {name for name in srcflow.__all__ if not name.startswith("_")}
    assert public == exported, public ^ exported


@pytest.mark.parametrize("name", PUBLIC_FUNCTIONS)
def test_every_public_function_has_a_numpy_style_docstring(name):
    doc = inspect.getdoc(getattr(srcflow, name))
    for section in ["Returns\n-------", "Examples\n--------"]:
        assert section in doc, f"{name}: no {section.splitlines()[0]}"
    parameters = inspect.signature(getattr(srcflow, name)).parameters
    if parameters:
        assert "Parameters\n----------" in doc, name
    for parameter in parameters.values():
        if parameter.kind is parameter.VAR_POSITIONAL:
            continue
        assert f"{parameter.name}" in doc, f"{name}: parameter {parameter.name} undocumented"
    assert "README" not in doc.split("Examples")[0].replace("``benches", ""), name
    assert "{" + "sketch_parameters}" not in doc


@pytest.mark.parametrize("method", ["close", "trim", "stats", "to_dot", "total_flops"])
def test_the_public_methods_have_numpy_style_docstrings(method):
    owner = srcflow.Graph if method in ("to_dot", "total_flops") else srcflow.Session
    doc = inspect.getdoc(getattr(owner, method))
    returns = inspect.signature(getattr(owner, method)).return_annotation not in (None, "None")
    assert ("Returns\n-------" in doc) == returns, method
    assert "Examples\n--------" in doc, method


def test_src_says_how_to_get_near_optimal_results():
    doc = inspect.getdoc(srcflow.src)
    assert "oversample=1.5" in doc and "optimum" in doc and "twice the time" in doc
    assert "paper's rule" in doc


def test_the_docstring_examples_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    modules = [srcflow._api, srcflow._report, srcflow._session, srcflow._resources, srcflow._graph]
    for module in modules:
        failed, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
        assert attempted > 0 and failed == 0, module.__name__


def test_the_package_metadata_has_a_description_and_a_readme():
    meta = importlib.metadata.metadata("srcflow")
    assert "Successive Randomized Compression" in meta["Summary"]
    assert "src-method" in (meta.get_payload() or meta["Description"] or "")


@pytest.mark.parametrize("function", ["src", "apply", "compress"])
def test_an_unknown_keyword_names_the_function_called(stack, function):
    call = getattr(srcflow, function)
    args = stack if function != "compress" else stack[1:]
    kwargs = {"chi_out": 4} if function == "src" else {}
    positional = [*args, 4] if function != "src" else args
    with pytest.raises(TypeError, match=rf"^{function}\(\) got an unexpected keyword argument 'bogus'"):
        call(*positional, bogus=1, **kwargs)


def test_a_nan_is_named_by_train_site_and_element_without_internal_names(stack):
    mpo, mps = stack
    mps[3] = mps[3].copy()
    mps[3].flat[5] = np.nan
    with pytest.raises(ValueError) as raised:
        srcflow.apply(mpo, mps, 4)
    message = str(raised.value)
    assert message.startswith("train 1, site 3: element 5"), message
    assert "read[" not in message and "→" not in message


def test_a_folder_as_trace_is_refused_before_any_site_is_read(stack, tmp_path):
    mpo, mps = stack

    class Unread:
        shape, dtype, ndim = mps[2].shape, mps[2].dtype, mps[2].ndim

        def __array__(self, dtype=None, copy=None):
            raise AssertionError("a site was read")

    mps[2] = Unread()
    with pytest.raises(ValueError, match=r"trace=.* is a folder; trace takes a file path"):
        srcflow.run(mpo, mps, chi_out=4, trace=tmp_path)
    with pytest.raises(ValueError, match=r"trace=.*: its folder .* does not exist"):
        srcflow.run(mpo, mps, chi_out=4, trace=tmp_path / "no" / "run.json")


def test_a_trace_file_there_is_replaced(stack, tmp_path):
    path = tmp_path / "run.json"
    path.write_text("an older trace")
    srcflow.run(*stack, chi_out=4, trace=path)
    assert "traceEvents" in path.read_text()


def test_report_reads_a_trace_as_the_cli_does(stack, tmp_path):
    default = pathlib.Path(__file__).parents[2] / "target" / "release" / "srcflow"
    cli = os.environ.get("SRCFLOW_CLI", str(default))
    path = tmp_path / "run.json"
    srcflow.run(*stack, chi_out=4, trace=path, seed=1)
    text = srcflow.report(path)
    assert text == subprocess.run([cli, "report", str(path)], capture_output=True, text=True, check=True).stdout
    assert "lane" in text
    (tmp_path / "not.json").write_text("{}")
    with pytest.raises(ValueError, match="not.json"):
        srcflow.report(tmp_path / "not.json")


def test_float16_sites_and_a_non_float_dtype_are_refused_and_integers_read_as_float64(stack):
    mpo, mps = stack
    with pytest.raises(TypeError, match=r"train 1, site 0: .* found float16; convert"):
        srcflow.apply(mpo, [s.astype(np.float16) for s in mps], 4)
    with pytest.raises(TypeError, match=r"dtype='int32' is not a type srcflow computes in"):
        srcflow.apply(mpo, mps, 4, dtype="int32")
    integers = [np.rint(4 * s).astype(np.int64) for s in mps]
    out = srcflow.apply(mpo, integers, 4, seed=1)
    assert all(site.dtype == np.float64 for site in out)


def test_a_host_budget_alone_too_small_is_named(stack, tmp_path):
    tight = srcflow.Resources(host_memory=20_000, scratch_dir=tmp_path)
    with pytest.raises(ValueError, match=r"raise `Resources.host_memory`") as raised:
        srcflow.apply(*stack, 4, resources=tight)
    assert "gpu_memory" not in str(raised.value)


def test_a_host_budget_above_the_machine_is_refused(stack):
    with pytest.raises(ValueError, match=r"host budget `Resources.host_memory` of 1.00 PB is more than"):
        srcflow.apply(*stack, 4, resources=srcflow.Resources(host_memory="1000TB"))


def test_a_size_string_without_a_unit_below_a_megabyte_is_refused():
    with pytest.raises(ValueError, match=r"'60' has no unit"):
        srcflow.Resources(host_memory="60")
    assert srcflow.Resources(host_memory="2000000").request()["host_memory"] == 2_000_000
    assert srcflow.Resources(host_memory=60).request()["host_memory"] == 60  # an int: bytes
