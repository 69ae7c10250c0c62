"""Kubernetes resource quantities as numbers: CPU in millicores, everything else in units.

`parse_quantity("250m") == 0.25`, `millicores("1.5") == 1500`, `units("128Mi") == 134217728`.
The scheduler, kubelet, HPA and metrics all compare requests, limits and usage through these,
so "0.5" and "500m" are the same CPU everywhere. Bad input raises ValueError (validation has
already refused it on the API side, so this only fires on a sandbox bug or a scenario typo).
"""

from __future__ import annotations

import math
import re

_SUFFIXES = {
    "": 1,
    "n": 1e-9,
    "u": 1e-6,
    "m": 1e-3,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "E": 1e18,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
}
_QUANTITY = re.compile(r"^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$")


def parse_quantity(value: str | int | float) -> float:
    if isinstance(value, int | float):
        return float(value)
    match = _QUANTITY.match(value.strip())
    if match is None or match.group(2) not in _SUFFIXES:
        raise ValueError(f"{value!r} is not a Kubernetes quantity")
    return float(match.group(1)) * _SUFFIXES[match.group(2)]


def millicores(value: str | int | float) -> int:
    return math.ceil(parse_quantity(value) * 1000 - 1e-9)


def units(value: str | int | float) -> int:
    return math.ceil(parse_quantity(value) - 1e-9)


def format_cpu(millis: float) -> str:
    """CPU as metrics-server prints it: nanocores would be exact, millicores read better."""
    return f"{max(round(millis), 0)}m"


def format_memory(amount: float) -> str:
    """Memory in Ki, as kubelets report usage (`kubectl top` converts to Mi)."""
    return f"{max(int(amount) // 1024, 0)}Ki"
