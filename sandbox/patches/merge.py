"""RFC 7386 JSON merge patch, and the JSON value rules every patch type shares.

`application/merge-patch+json` is what kubectl sends for custom resources and for `kubectl scale`:
objects merge key by key, `null` deletes a key, and anything else (lists included) replaces.

The helpers compare JSON values by JSON's rules rather than Python's: `true` is not `1`, which
`==` would say it is, and that difference decides whether a `test` operation passes or a field
counts as changed for server-side apply.

This module knows nothing of schemas, Kubernetes kinds, storage or HTTP.
"""

from __future__ import annotations

from typing import Any

from sandbox.errors import BadRequest
from sandbox.jsoncopy import deep_copy


def json_type(value: Any) -> str:
    """The JSON name of a value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def json_equal(left: Any, right: Any) -> bool:
    """Deep equality of two JSON values; numbers compare by value, booleans only to booleans."""
    if left is right:
        return True  # shared subtrees of immutable objects: no need to walk them
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, dict):
        return (
            isinstance(right, dict)
            and left.keys() == right.keys()
            and all(json_equal(value, right[key]) for key, value in left.items())
        )
    if isinstance(left, list):
        return (
            isinstance(right, list)
            and len(left) == len(right)
            and all(json_equal(a, b) for a, b in zip(left, right, strict=True))
        )
    if isinstance(right, dict | list):
        return False
    return bool(left == right)


def apply_merge_patch(target: dict[str, Any], patch: Any) -> dict[str, Any]:
    """Apply a JSON merge patch to an object; neither argument is modified."""
    if not isinstance(patch, dict):
        raise BadRequest(
            f"a merge patch must be a JSON object, not {json_type(patch)}: "
            'send {"field": value} to set a field and {"field": null} to remove it'
        )
    result = deep_copy(target)
    _merge_into(result, patch)
    return result


def _merge_into(target: dict[str, Any], patch: dict[str, Any]) -> None:
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict):
            current = target.get(key)
            # RFC 7386: a patch object merges onto a non-object as onto `{}`, which also drops
            # the nulls nested in a brand-new value.
            child = current if isinstance(current, dict) else {}
            _merge_into(child, value)
            target[key] = child
        else:
            target[key] = deep_copy(value)
