"""Kubernetes resource quantities (`500m`, `1.5Gi`, `2e3`) read as exact decimals.

Validation only needs to know whether a quantity is well formed, its sign, and how two compare,
so this parses to `Decimal` and keeps no canonical formatting. It knows nothing of objects.
"""

from __future__ import annotations

import re
from decimal import Decimal

FORMAT_ERROR = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)

_QUANTITY = re.compile(
    r"(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?:(?P<binary>Ki|Mi|Gi|Ti|Pi|Ei)|(?P<exponent>[eE][+-]?[0-9]+)|(?P<decimal>[numkMGTPE]?))"
)
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}


def parse(value: object) -> Decimal | None:
    """The quantity's value, or None when it is not a quantity (YAML numbers are accepted)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return Decimal(str(value))
    if not isinstance(value, str):
        return None
    found = _QUANTITY.fullmatch(value)
    if found is None:
        return None
    number = Decimal(found["number"])
    if found["binary"]:
        return number * Decimal(1024) ** _BINARY[found["binary"]]
    if found["exponent"]:
        return number.scaleb(int(found["exponent"][1:]))
    return number.scaleb(_DECIMAL[found["decimal"] or ""])
