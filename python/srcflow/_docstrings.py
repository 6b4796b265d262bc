"""The docstring sections that `src`, `apply`, `compress`, `run` and `graph` share, written
once: a function's docstring names them as ``{sketch_parameters}`` and the like, and `shares`
fills them in."""

from collections.abc import Callable
from textwrap import indent

_SECTIONS = {
    "sketch_parameters": """\
chi_out : int
    The output's bond cap: every bond of the result is at most this. Any integer but
    ``bool``, at least 1.
cutoff : float, default 0.0
    Relative singular-value cutoff in [0, 1). Above 0, a rounding sweep after the sketch
    drops the product's singular values below ``cutoff * sigma_max`` at every bond (at least
    one is kept; `chi_out` stays the cap). 0 keeps the bonds at `chi_out` where they can be.
oversample : float or None, default 1.0
    Sketch ``ceil(oversample * chi_out)`` columns, then bring the bonds back to `chi_out`
    with one SVD rounding sweep. 1.0 is plain SRC (no rounding sweep). None takes the SRC
    paper's rule, ``max(ceil(1.5 * chi_out), chi_out + 10)`` columns. See Notes.
dtype : numpy dtype or None, default None
    The type to compute and return in: the inputs' types promoted with this one (it may
    promote the result, never demote it). srcflow computes in float32, float64, complex64
    and complex128; any other type is a TypeError. None: the inputs' promoted type, where
    integer and boolean sites count as float64, as in src-method.
seed : int or None, default None
    Seeds the random sketches (PCG64): the same seed gives the same output on every run,
    thread count and batch size (not src-method's output for that seed). None draws a
    fresh seed.
device : {"cpu", "gpu"}, default "cpu"
    "cpu" computes on the CPU; "gpu" on the CUDA backend, where a missing driver or GPU is
    a BackendUnavailableError before any site is read.
resources : Resources or None, default None
    Memory budgets, the scratch folder for spilled environments and the devices; None
    detects them (see `Resources`).""",
    "engine_parameters": """\
trace : str, os.PathLike or None, default None
    Write the run's Perfetto trace (Chrome JSON, open it at https://ui.perfetto.dev) to
    this file, replacing one that is there. The path is checked before the run starts: a
    folder, or a file in a folder that does not exist, is a ValueError naming `trace`.
    `report(path)` summarises it.
progress : bool, default False
    Draw a progress bar on standard error when it is a terminal.
prefetch : str or None, default None
    When fetches of spilled environments start: "none", "lookahead:K" (K steps ahead) or
    "bandwidth" / "bandwidth:WINDOW" (the default: as early as the disk's rate needs).
batch_cols : int or None, default None
    Sketch columns per environment task; None lets the planner choose for the budgets.
threads : int or None, default None
    Worker threads; None: one per core.
session : Session or None, default None
    The `Session` to run on; None: the process's default session, which keeps plans and
    threads between calls (see `Session`).""",
    "raises": """\
TypeError
    A train of an unknown layout, a site of a type srcflow does not compute in (float16,
    longdouble, ...), a `dtype` that is not one, a keyword the function does not take.
ValueError
    Mismatched shapes or site counts, a periodic train, a NaN or infinite element (named by
    train, site and element), an argument out of range, an output path that cannot be
    written.
DoesNotFitError
    Budgets too small for the problem, however the sweep is planned (a ValueError); the
    message names the site, the kernel, the bytes it needs and the budget to raise.
CheckpointMismatchError
    ``Resources.checkpoint`` holds a checkpoint of another call (a ValueError); the message
    says what differs, and the checkpoint is left as it is.
OutOfMemoryError
    The memory governor could not fit a task even at its smallest batch (a MemoryError).
BackendUnavailableError
    ``device="gpu"`` where CUDA is missing (an ImportError).
OSError
    A site that raises it when read, or a scratch disk that fails.
KeyboardInterrupt
    Ctrl-C: the run stops, removing its scratch files.""",
    "accuracy_notes": """\
Plain SRC (``oversample=1.0``) lands above the truncated-SVD optimum, the best error any
compression to `chi_out` can reach, when the spectrum decays slowly: 1.6 to 3.3 times it on
the problems measured (3.3 times on srcflow's accuracy benchmark,
``benches/accuracy_controls.sh``). For near-optimal results, oversample:
``oversample=1.5`` (or None) sketches more columns and rounds back to `chi_out`, which
brought that benchmark to 1.10 times the optimum, for about twice the time. A `cutoff`
also trims the bonds whose singular values do not matter.""",
}


def shares(function: Callable) -> Callable:
    """`function` with the shared sections its docstring names filled in, at the docstring's
    own indentation."""
    doc = function.__doc__
    for name, text in _SECTIONS.items():
        marker = "{" + name + "}"
        at = doc.find(marker)
        if at < 0:
            continue
        margin = doc[doc.rfind("\n", 0, at) + 1 : at]
        doc = doc.replace(marker, indent(text, margin).lstrip())
    function.__doc__ = doc
    return function
