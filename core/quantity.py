"""Kubernetes quantities as numbers: "250m" -> 0.25, "128Mi" -> 134217728.0, "2" -> 2.0.

What the tools compare and compute (usage against requests and allocatable, a memory limit for
a fix); the full quantity grammar is the API server's business.
"""

from __future__ import annotations

import math
import re

MIB = 2.0**20
_QUANTITY = re.compile(r"([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([A-Za-z]*)")
_SUFFIXES = {
    "": 1.0,
    "n": 1e-9, "u": 1e-6, "m": 1e-3,
    "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
    "Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50, "Ei": 2.0**60,
}  # fmt: skip


def parse(value: object) -> float | None:
    """The number a quantity stands for, or None if it is not one."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    match = _QUANTITY.fullmatch(str(value or "").strip())
    if match is None or match[2] not in _SUFFIXES:
        return None
    try:
        return float(match[1]) * _SUFFIXES[match[2]]
    except ValueError:  # "1.2.3"
        return None


def amount(value: object) -> float:
    """Like `parse`, with 0 for a missing or malformed quantity (a sum's neutral element)."""
    return parse(value) or 0.0


def mebibytes(value: float) -> str:
    """A memory size rounded up to a whole MiB, as a manifest would write it ("192Mi")."""
    return f"{math.ceil(value / MIB)}Mi"
