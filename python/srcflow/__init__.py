"""srcflow: compressed products of MPOs and MPSs by Successive Randomized Compression.

A drop-in for src-method's API (`src`, `apply`, `compress`, `Resources`) over srcflow's
engine, which plans the sweep as a graph of tasks, spills environments to host memory and
disk when they do not fit, and writes a Perfetto trace of the run. `run` returns the report
too; `graph` shows the sweep graph without running it; `report` sums a trace up.
"""

import logging as _logging

from ._api import Run, apply, compress, graph, run, src
from ._core import (
    BackendUnavailableError,
    CheckpointMismatchError,
    DeviceError,
    DoesNotFitError,
    OutOfMemoryError,
    __version__,
)
from ._graph import Graph
from ._report import report
from ._resources import Resources
from ._session import Session, default_session

# Stay silent unless the application configures logging.
_logging.getLogger(__name__).addHandler(_logging.NullHandler())

__all__ = [
    "BackendUnavailableError",
    "CheckpointMismatchError",
    "DeviceError",
    "DoesNotFitError",
    "Graph",
    "OutOfMemoryError",
    "Resources",
    "Run",
    "Session",
    "__version__",
    "apply",
    "compress",
    "default_session",
    "graph",
    "report",
    "run",
    "src",
]
