"""The committed reference fixtures are what tests/fixtures/make_references.py makes: rerun here
with NumPy into a temporary folder and compared file by file (values to round-off, since LAPACK
builds may differ in the last bits)."""
import importlib.util
import json
import pathlib

import numpy as np

FIXTURES = pathlib.Path(__file__).resolve().parents[2] / "tests" / "fixtures"


def load_script():
    """The fixture script as a module."""
    spec = importlib.util.spec_from_file_location("make_references", FIXTURES / "make_references.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def close(a, b):
    """JSON values equal, numbers to a relative 1e-6 (tails, bounds and errors: ratios of
    singular values, which another LAPACK build moves in the last digits)."""
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return abs(a - b) <= 1e-6 * max(abs(a), abs(b)) + 1e-15
    return a == b


def close_spectra(ours, theirs):
    """Singular values at every cut equal to 1e-10 of the cut's largest (round-off values near
    zero differ between LAPACK builds)."""
    return len(ours) == len(theirs) and all(
        len(a) == len(b) and np.allclose(a, b, rtol=0, atol=1e-10 * b[0]) for a, b in zip(ours, theirs)
    )


def test_the_committed_fixtures_are_what_the_script_makes(tmp_path):
    script = load_script()
    script.ROOT = tmp_path / "reference"
    script.main()
    committed = FIXTURES / "reference"
    made = sorted(p.relative_to(script.ROOT) for p in script.ROOT.rglob("*") if p.is_file())
    kept = sorted(p.relative_to(committed) for p in committed.rglob("*") if p.is_file())
    assert made == kept
    for path in made:
        if path.suffix == ".npy":
            a, b = np.load(script.ROOT / path), np.load(committed / path)
            assert a.dtype == b.dtype and a.shape == b.shape, path
            assert np.allclose(a, b, rtol=1e-9, atol=1e-12 * np.abs(b).max()), path
        elif path.suffix == ".json":
            ours = json.loads((script.ROOT / path).read_text())
            theirs = json.loads((committed / path).read_text())
            assert ours.keys() == theirs.keys(), path
            for key in ours:
                same = close_spectra if key == "spectra" else close
                assert same(ours[key], theirs[key]), f"{path}: {key}"
        else:
            assert (script.ROOT / path).read_bytes() == (committed / path).read_bytes(), path
