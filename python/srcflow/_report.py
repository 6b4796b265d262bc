"""`report`: what a run's trace says, summed per pass and lane, as `srcflow report` prints it."""

import os

from . import _core


def report(path: str | os.PathLike[str]) -> str:
    """The summary of a trace that ``run(..., trace=path)`` wrote.

    The same summary the command-line tool's ``srcflow report`` prints: per pass and lane,
    the busy, idle and stalled time, bytes moved and bandwidth, GFLOP/s, and how much of the
    I/O overlapped compute.

    Parameters
    ----------
    path : str or os.PathLike
        A Chrome-JSON trace written by ``srcflow.run(..., trace=path)`` (or ``srcflow run
        --trace``).

    Returns
    -------
    str
        The summary, lines of text to print.

    Raises
    ------
    OSError
        The file cannot be read.
    ValueError
        The file is not a trace srcflow wrote (the message names the file and what is wrong).

    Examples
    --------
    >>> import quimb.tensor as qtn, srcflow
    >>> _ = srcflow.run(qtn.MPO_ham_heis(8), qtn.MPS_rand_state(8, 4), chi_out=4,
    ...                 trace="run.json")
    >>> print(srcflow.report("run.json"))  # doctest: +ELLIPSIS
    left-to-right: ...
      lane                   busy s   idle s  stall s         MB        MB/s  GFLOP/s  overlap
    ...
    """
    return _core.report(os.fspath(path))
