"""Device names and memory sizes as a design writes them, in the form accelerate takes.

TOML keys are always strings, so a design writes GPU 0 as `"0"` or `"cuda:0"` in a max_memory
table and as `0` or `"cuda:0"` in a device map; accelerate wants the integer 0 for both. These
functions turn what a user may write into one canonical name, or say what is wrong (as a
ValueError with the lab's fix mark: the schema turns it into one error naming file and field)."""

from __future__ import annotations

import re

from diarylab.foundation.datafiles import FIX_MARK

# A GPU index, or one of accelerate's named places ("disk": weights read from files per layer).
Device = int | str
NAMED = ("cpu", "disk", "mps")
_CUDA = re.compile(r"^cuda(?::(\d+))?$")
_INDEX = re.compile(r"^\d+$")
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B|B)?\s*$", re.IGNORECASE)
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
DEVICE_FIX = 'name a GPU by its index (0 or "cuda:0"), or "cpu", "disk" or "mps"'


def device_name(value: object) -> Device:
    """The canonical name of a device written as 0, "0", "cuda", "cuda:0", "cpu", "disk" or
    "mps" (bare "cuda" is GPU 0, as torch reads it)."""
    if isinstance(value, bool):  # True is an int to Python, never a device to a user
        raise ValueError(f"{value!r} is not a device{FIX_MARK}{DEVICE_FIX}")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"GPU index {value} is negative{FIX_MARK}{DEVICE_FIX}")
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        if text in NAMED:
            return text
        if _INDEX.match(text):
            return int(text)
        cuda = _CUDA.match(text)
        if cuda:
            return int(cuda.group(1) or 0)
    raise ValueError(f"unknown device {value!r}{FIX_MARK}{DEVICE_FIX}")


def torch_name(device: Device) -> str:
    """How torch and the manifest write a device: GPU 1 is "cuda:1"."""
    return f"cuda:{device}" if isinstance(device, int) else device


def size_bytes(value: object) -> int:
    """Bytes from an integer or a string such as "70GiB", "500MB", "1.5 TB" (decimal units are
    powers of 10, binary ones powers of 2; a bare number is bytes)."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a size{FIX_MARK}{_SIZE_FIX}")
    if isinstance(value, int):
        size = value
    elif isinstance(value, str) and (found := _SIZE.match(value)):
        number, unit = found.groups()
        size = int(float(number) * _UNITS[(unit or "B").upper()])
    else:
        raise ValueError(f"{value!r} is not a memory size{FIX_MARK}{_SIZE_FIX}")
    if size <= 0:
        raise ValueError(f"memory size {value!r} is not positive{FIX_MARK}{_SIZE_FIX}")
    return size


_SIZE_FIX = 'write bytes (an integer) or a number with a unit: "70GiB", "500MB", "2TB"'
