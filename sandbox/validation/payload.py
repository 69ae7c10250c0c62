"""Typed reads from raw JSON objects that never raise on a wrong shape.

Rules read nested fields of client-supplied dicts. A field of the wrong JSON type (a string
where an integer belongs, a list where a map belongs) reads as absent here: reporting type
errors is schema validation's job, and a rule must never crash on a malformed body. Nothing
is copied or mutated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

EMPTY: Mapping[str, Any] = {}


def mapping(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else EMPTY


def items(obj: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    """A list of objects; entries that are not objects read as empty ones."""
    value = obj.get(key)
    if not isinstance(value, list):
        return []
    return [entry if isinstance(entry, Mapping) else EMPTY for entry in value]


def strings(obj: Mapping[str, Any], key: str) -> list[str]:
    value = obj.get(key)
    if not isinstance(value, list):
        return []
    return [entry for entry in value if isinstance(entry, str)]


def text(obj: Mapping[str, Any], key: str) -> str:
    value = obj.get(key)
    return value if isinstance(value, str) else ""


def integer(obj: Mapping[str, Any], key: str) -> int | None:
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def string_map(obj: Mapping[str, Any], key: str) -> dict[str, str]:
    """Labels, annotations, data: a map of strings (non-string values read as "")."""
    return {k: v if isinstance(v, str) else "" for k, v in mapping(obj, key).items()}


def path_get(obj: Mapping[str, Any], dotted: str) -> Any:
    """The value at `a.b.c`, or None when any step is missing or not an object."""
    current: Any = obj
    for step in dotted.split("."):
        if not isinstance(current, Mapping):
            return None
        current = current.get(step)
    return current
