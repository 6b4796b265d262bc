"""Checks of the arguments src-method takes, with src-method's exception classes."""

from __future__ import annotations

import contextlib
import numbers
import os
import re
import secrets
from collections.abc import Sequence
from math import ceil, isfinite

import numpy as np

_UNITS = {
    "B": 1,
    "K": 2**10,
    "M": 2**20,
    "G": 2**30,
    "T": 2**40,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "KIB": 2**10,
    "MIB": 2**20,
    "GIB": 2**30,
    "TIB": 2**40,
}
# A unit of one letter is binary ("36G" is 36 GiB), as `srcflow run --host-memory` reads it.
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B|B|[KMGT])?\s*$", re.IGNORECASE)

# The seeds srcflow's sketches take: 64 bits, as `srcflow run --seed`.
_SEEDS = 2**64
# The largest chi_out and byte count srcflow's engine reads (its integers are 64-bit).
_LARGEST = 2**63 - 1

# Below this, a size string without a unit ("60") is a unit forgotten, not a budget meant (as
# `srcflow run --host-memory` reads it).
_UNITLESS_MIN = 10**6

# The backend each `device` value selects.
_BACKENDS = {"cpu": "cpu", "gpu": "cuda"}


def chi_out(value: object) -> int:
    """`value` as a positive int: any integer but `bool` (TypeError), from 1 to 2**63 - 1
    (ValueError)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"chi_out must be an integer, got {value!r}.")
    if value < 1:
        raise ValueError(f"chi_out must be positive, got {value!r}.")
    if value > _LARGEST:
        raise ValueError(
            f"chi_out must be at most 2**63 - 1, got {value!r}; any chi_out above the largest "
            "rank the product can have runs as that rank, so give that or less."
        )
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
    """The run's seed: an integer in [0, 2**64) (NumPy's error for a negative one, as
    src-method raises it, with a note naming `seed`; ValueError from 2**64 on, which srcflow's
    64-bit sketches cannot tell apart; TypeError for the seed sequences and arrays NumPy
    also takes), or a random one for None."""
    if value is None:
        return secrets.randbits(63)
    with named("seed"):
        np.random.default_rng(value)  # NumPy's own TypeError or ValueError for a bad seed.
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"seed must be an integer or None, got {value!r}.")
    if value >= _SEEDS:
        raise ValueError(
            f"seed must be below 2**64 (srcflow's sketches take a 64-bit seed, as `srcflow run "
            f"--seed` does), got {value!r}."
        )
    return int(value)


@contextlib.contextmanager
def named(argument: str):
    """Adds a note naming `argument` to an error raised in the block (the message stays the
    one src-method gives for it)."""
    try:
        yield
    except (TypeError, ValueError) as error:
        error.add_note(f"srcflow: raised for the argument `{argument}`")
        raise


def size(value: object, name: str) -> int:
    """A byte count or a size string ("36GB", "36GiB", "36G" = 36 GiB) as bytes, for the
    field `name`: src-method's errors (with a note naming `name`) for what it refuses; a string
    without a unit below a million is refused as a unit forgotten, and a size from 2**63 bytes
    on as beyond any machine."""
    with named(name):
        bytes_ = _bytes(value)
    if bytes_ > _LARGEST:
        raise ValueError(
            f"{name}={value!r} is {bytes_} bytes, beyond any machine's memory (srcflow reads "
            "sizes up to 2**63 - 1 bytes)."
        )
    return bytes_


def _bytes(value: object) -> int:
    """`size`'s reading of `value`, before its bound."""
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


def device_ids(devices: object, most: int) -> tuple[int, ...] | None:
    """A device count or a sequence of distinct non-negative ids, as ids (None: the default);
    ValueError for more than `most` devices, before any list of them is made."""
    if devices is None:
        return None
    if isinstance(devices, int | np.integer) and not isinstance(devices, bool):
        if devices < 1:
            raise ValueError(f"Expected a positive device count, got {devices}.")
        if devices > most:
            raise ValueError(
                f"devices={devices} is more than the {most} devices one run can share its "
                "sweep between."
            )
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
    if len(ids) > most:
        raise ValueError(
            f"{len(ids)} device ids is more than the {most} devices one run can share its "
            "sweep between."
        )
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
