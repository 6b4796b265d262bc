"""`Resources`: the budgets and scratch space of one call, as src-method takes them."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from . import _arguments


@dataclass(frozen=True)
class Resources:
    """Memory budgets and scratch space for one call; every field left as None is detected.

    Attributes:
        gpu_memory: Device memory per device, a byte count or a size string ("36GB",
            "36GiB"). On the CPU backend it is the simulated device's budget.
        host_memory: Host memory the run may use (default: 90 % of MemAvailable).
        scratch_dir: Where environments that fit in neither budget go (default: $TMPDIR);
            a folder that must exist (srcflow makes no folder it is given).
        devices: A count n (the first n devices) or a sequence of distinct device ids.
    """

    gpu_memory: int | str | None = None
    host_memory: int | str | None = None
    scratch_dir: str | os.PathLike[str] | None = None
    devices: int | Sequence[int] | None = None
    _request: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Checks the budgets and devices as src-method does (TypeError, ValueError)."""
        sizes = [None if v is None else _arguments.size(v) for v in (self.gpu_memory, self.host_memory)]
        ids = _arguments.device_ids(self.devices)
        request = {
            "device_memory": sizes[0],
            "host_memory": sizes[1],
            "scratch_dir": None if self.scratch_dir is None else os.fspath(self.scratch_dir),
            "devices": list(ids) if ids is not None else [0],
        }
        object.__setattr__(self, "_request", request)

    def request(self) -> dict:
        """The budgets and devices as the engine takes them."""
        return dict(self._request)
