"""`Resources`: the budgets and scratch space of one call, as src-method takes them."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from . import _arguments, _core


@dataclass(frozen=True)
class Resources:
    """Memory budgets and scratch space for one call, as src-method takes them.

    Every field left as None is detected when the call runs.

    Parameters
    ----------
    gpu_memory : int, str or None, default None
        Device memory per device: a byte count or a size string ("36GB", "36GiB"; one without
        a unit below a million, "60", is refused as a unit forgotten). On the
        CPU backend, the simulated device's budget; None: the host budget.
    host_memory : int, str or None, default None
        Host memory the run may use, as `gpu_memory` takes it; None: 90 % of MemAvailable. `run` refuses a budget
        above this machine's memory. When only this is set, a problem too large names it.
    scratch_dir : str, os.PathLike or None, default None
        Where environments that fit in neither budget go; None: $TMPDIR. A folder that
        must exist (srcflow makes no folder it is given).
    devices : int, sequence of int or None, default None
        A count n (the first n devices) or distinct device ids; None: device 0.
    checkpoint : str, os.PathLike or None, default None
        A folder (made if missing; its parent must exist) where the call keeps what it needs
        to go on after its process is killed. The same call made again, by a job requeued
        after a time limit or a node failure, resumes from it and returns the uninterrupted
        call's output, bit for bit; a checkpoint of another problem, other options or another
        srcflow is refused (ValueError, naming what differs). Removed when the call returns.
        None: nothing is kept.
    checkpoint_every : int, str or None, default None
        With `checkpoint`: keep the environments and projected environments of every n-th
        site only (an int), or of the first site a pass reaches once a time has passed since
        it last kept one (a str: "30s", "10m", "1.5h"; a kill then loses about that much of
        the pass under way). Output cores are kept at every site. Fewer cost less; a resumed
        call makes those between again.
        None: every site.
    io_depth : int or None, default None
        Requests in flight per transfer to and from the scratch folder, each a large aligned
        chunk of the file (1 to 64). A parallel filesystem (Lustre, GPFS) gives bandwidth only
        to many requests at once; a local disk is the same at any depth. None: 8.
    direct_io : bool or None, default None
        True: spill files bypass the page cache (O_DIRECT), and a scratch folder whose
        filesystem refuses it is refused; False: through the page cache, each file flushed and
        dropped from it once written and once read; None: direct where the filesystem takes it.

    Raises
    ------
    TypeError, ValueError
        As src-method raises them for the same fields.

    Examples
    --------
    >>> import srcflow
    >>> tight = srcflow.Resources(gpu_memory="2GB", host_memory="8GiB", scratch_dir="/tmp")
    >>> resumable = srcflow.Resources(checkpoint="/scratch/run-17.ckpt")
    >>> hourly = srcflow.Resources(checkpoint="/scratch/run-18.ckpt", checkpoint_every="1h")
    """

    gpu_memory: int | str | None = None
    host_memory: int | str | None = None
    scratch_dir: str | os.PathLike[str] | None = None
    devices: int | Sequence[int] | None = None
    checkpoint: str | os.PathLike[str] | None = None
    checkpoint_every: int | str | None = None
    io_depth: int | None = None
    direct_io: bool | None = None
    _request: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Checks the budgets and devices as src-method does (TypeError, ValueError)."""
        sizes = [
            None if value is None else _arguments.size(value, name)
            for name, value in (("gpu_memory", self.gpu_memory), ("host_memory", self.host_memory))
        ]
        ids = _arguments.device_ids(self.devices, _core.MOST_DEVICES)
        request = {
            "device_memory": sizes[0],
            "host_memory": sizes[1],
            "scratch_dir": None if self.scratch_dir is None else os.fspath(self.scratch_dir),
            "devices": list(ids) if ids is not None else [0],
            "checkpoint": None if self.checkpoint is None else os.fspath(self.checkpoint),
            "checkpoint_every": _checkpoint_every(self.checkpoint_every, self.checkpoint),
            "io_depth": _io_depth(self.io_depth),
            "direct_io": _direct_io(self.direct_io),
        }
        object.__setattr__(self, "_request", request)

    def request(self) -> dict:
        """The budgets and devices as the engine takes them."""
        return dict(self._request)


def _checkpoint_every(every: int | str | None, checkpoint: object) -> str | None:
    """`Resources.checkpoint_every` as the engine reads it (TypeError, ValueError)."""
    if every is None:
        return None
    if checkpoint is None:
        raise ValueError("`Resources.checkpoint_every` needs `Resources.checkpoint`")
    if isinstance(every, bool) or not isinstance(every, (int, str)):
        raise TypeError(
            f"`Resources.checkpoint_every` is a number of sites or a time such as '10m', "
            f"found {type(every).__name__}"
        )
    if isinstance(every, int) and every < 1:
        raise ValueError(f"`Resources.checkpoint_every` must be at least 1 site, found {every}")
    return str(every)


def _io_depth(depth: object) -> int | None:
    """`Resources.io_depth` as the engine reads it (TypeError, ValueError)."""
    if depth is None:
        return None
    if isinstance(depth, bool) or not isinstance(depth, int):
        raise TypeError(f"`Resources.io_depth` is a number of requests, found {type(depth).__name__}")
    if not 1 <= depth <= _core.MOST_IO_DEPTH:
        raise ValueError(
            f"`Resources.io_depth` must be between 1 and {_core.MOST_IO_DEPTH} requests, found {depth}"
        )
    return depth


def _direct_io(direct: object) -> bool | None:
    """`Resources.direct_io` as the engine reads it (TypeError)."""
    if direct is not None and not isinstance(direct, bool):
        raise TypeError(f"`Resources.direct_io` is True, False or None, found {direct!r}")
    return direct
