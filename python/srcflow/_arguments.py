"""Checks of the arguments src-method takes, with src-method's exception classes."""

from __future__ import annotations

import numbers
import os
import re
import secrets
from collections.abc import Sequence
from math import ceil, isfinite

import numpy as np

_UNITS = {
    "B": 1,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "KIB": 2**10,
    "MIB": 2**20,
    "GIB": 2**30,
    "TIB": 2**40,
}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B|B)?\s*$", re.IGNORECASE)

# Below this, a size string without a unit ("60") is a unit forgotten, not a budget meant (as
# `srcflow run --host-memory` reads it).
_UNITLESS_MIN = 10**6

# The backend each `device` value selects.
_BACKENDS = {"cpu": "cpu", "gpu": "cuda"}


def chi_out(value: object) -> int:
    """`value` as a positive int: any integer but `bool` (TypeError), at least 1 (ValueError)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"chi_out must be an integer, got {value!r}.")
    if value < 1:
        raise ValueError(f"chi_out must be positive, got {value!r}.")
    return int(value)


def cutoff(value: object) -> float:
    """`value` as a float in [0, 1) (ValueError otherwise)."""
    if not isinstance(value, numbers.Real) or not 0.0 <= value < 1.0:
        raise ValueError(f"cutoff must be in [0.0, 1.0), got {value!r}.")
    return float(value)


def sketch_size(chi: int, oversample: object) -> int:
    """The sketch columns for `chi` and `oversample`: ceil(oversample * chi), or the paper's
    max(ceil(1.5 chi), chi + 10) for None; ValueError unless a finite factor of at least 1."""
    if oversample is None:
        return max((3 * chi + 1) // 2, chi + 10)
    if (
        isinstance(oversample, bool)
        or not isinstance(oversample, numbers.Real)
        or not isfinite(oversample)
        or oversample < 1.0
    ):
        raise ValueError(f"oversample must be a finite factor >= 1.0, got {oversample!r}.")
    return ceil(oversample * chi)


def oversample_factor(chi: int, sketch: int) -> float:
    """The factor srcflow sketches `sketch` columns for `chi` with (its own ceiling of it)."""
    return 1.0 if sketch == chi else (sketch - 0.5) / chi


def backend(device: object) -> str:
    """srcflow's backend for src-method's `device` ("cpu" or "gpu"; ValueError otherwise)."""
    if device not in _BACKENDS:
        raise ValueError(f"Unknown device {device!r}; expected 'cpu' or 'gpu'.")
    return _BACKENDS[device]


def seed(value: object) -> int:
    """The run's seed: a non-negative integer (NumPy's errors for a bad one; `TypeError` for
    the seed sequences and arrays NumPy also takes), or a random one for None."""
    if value is None:
        return secrets.randbits(63)
    np.random.default_rng(value)  # NumPy's own TypeError or ValueError for a bad seed.
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"seed must be an integer or None, got {value!r}.")
    return int(value) % 2**64


def size(value: object) -> int:
    """A byte count or a size string ("36GB", "36GiB") as bytes; a string without a unit
    below a million is refused as a unit forgotten."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise TypeError(f"Expected a byte count or a size string such as '36GB', got {value!r}.")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"Expected a non-negative byte count, got {value}.")
        return value
    match = _SIZE.match(value)
    if match is None:
        raise ValueError(f"Expected a size string such as '36GB' or '36GiB', got {value!r}.")
    number, unit = match.groups()
    if unit is None and float(number) < _UNITLESS_MIN:
        raise ValueError(
            f"'{value.strip()}' has no unit, and {number} bytes cannot be meant as a budget: give "
            f"one, as in {number}MB, {number}GB or {number}GiB (an int is a byte count)."
        )
    return int(float(number) * _UNITS[(unit or "B").upper()])


def output_file(path: object, name: str) -> str | None:
    """`path` as a string, or None: checked before any work as a file srcflow may write (or
    replace), ValueError naming the argument `name` for a folder or a missing parent."""
    if path is None:
        return None
    text = os.fspath(path)
    if os.path.isdir(text):
        raise ValueError(f"{name}={text!r} is a folder; {name} takes a file path.")
    parent = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(parent):
        raise ValueError(f"{name}={text!r}: its folder {parent!r} does not exist.")
    return text


def device_ids(devices: object) -> tuple[int, ...] | None:
    """A device count or a sequence of distinct non-negative ids, as ids (None: the default)."""
    if devices is None:
        return None
    if isinstance(devices, int | np.integer) and not isinstance(devices, bool):
        if devices < 1:
            raise ValueError(f"Expected a positive device count, got {devices}.")
        return tuple(range(int(devices)))
    if isinstance(devices, str) or not isinstance(devices, Sequence):
        raise TypeError(f"Expected a device count or a sequence of device ids, got {devices!r}.")
    ids = []
    for d in devices:
        if not isinstance(d, int | np.integer) or isinstance(d, bool):
            raise TypeError(f"Expected integer device ids, got {devices!r}.")
        ids.append(int(d))
    if not ids or min(ids) < 0 or len(set(ids)) != len(ids):
        raise ValueError(f"Expected distinct non-negative device ids, got {devices!r}.")
    return tuple(ids)


def positive_or_none(name: str, value: object) -> int | None:
    """`value` as a positive int, or None: `TypeError` or `ValueError` naming `name`."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer or None, got {value!r}.")
    if value < 1:
        raise ValueError(f"{name} must be positive, got {value!r}.")
    return int(value)


def prefetch(value: object) -> str | None:
    """The prefetch policy's text ("none", "lookahead:K", "bandwidth[:WINDOW]"), or None; the
    engine reads it and names what it cannot."""
    if value is not None and not isinstance(value, str):
        raise TypeError(f"prefetch must be a string or None, got {value!r}.")
    return value
