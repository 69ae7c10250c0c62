"""Kubernetes quantities as numbers, and back: "128Mi" -> 134217728.0, "250m" -> 0.25.

Only what the analyzers and playbooks compare and compute (memory limits, CPU requests); the
full quantity grammar is the API server's business.
"""

from __future__ import annotations

import math

_SUFFIXES = {
    "Ki": 2.0**10,
    "Mi": 2.0**20,
    "Gi": 2.0**30,
    "Ti": 2.0**40,
    "Pi": 2.0**50,
    "Ei": 2.0**60,
    "n": 1e-9,
    "u": 1e-6,
    "m": 1e-3,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "E": 1e18,
}
MIB = 2.0**20


def parse(value: object) -> float | None:
    """The number a quantity stands for, or None if it is not one."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    text = str(value or "").strip()
    for suffix in sorted(_SUFFIXES, key=len, reverse=True):
        if text.endswith(suffix):
            number, scale = text[: -len(suffix)], _SUFFIXES[suffix]
            break
    else:
        number, scale = text, 1.0
    try:
        return float(number) * scale
    except ValueError:
        return None


def mebibytes(amount: float) -> str:
    """A memory size rounded up to a whole MiB, as a manifest would write it ("192Mi")."""
    return f"{math.ceil(amount / MIB)}Mi"
