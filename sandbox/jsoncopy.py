"""Deep copies of JSON-shaped values, the sandbox's hottest copy.

A round trip through orjson copies API objects several times faster than `copy.deepcopy`, which
matters because every write copies the object it builds on. Values that are not plain JSON (a
YAML timestamp, a huge integer) fall back to `copy.deepcopy` unchanged.
"""

from __future__ import annotations

import copy
from typing import TypeVar

import orjson

T = TypeVar("T")


def deep_copy(value: T) -> T:
    try:
        copied: T = orjson.loads(orjson.dumps(value))
    except (TypeError, orjson.JSONEncodeError):
        return copy.deepcopy(value)
    return copied
