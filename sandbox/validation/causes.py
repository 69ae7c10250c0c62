"""Builders for validation causes, worded the way Kubernetes' `field.Error` renders them.

A cause's message is what follows `<field>: ` in the Status message: `Required value`,
`Invalid value: -1: must be greater than or equal to 0`, `Unsupported value: "X": supported
values: "A", "B"`. The builders take `(path, value, detail)` positionally, mirroring
Kubernetes' `field.Invalid(path, value, detail)`: every rule reads like its Go counterpart, and
that familiarity is worth more here than keyword-only arguments.

Also here: the few value rules every kind shares (non-negative counts, int-or-percent, immutable
fields). Nothing here knows about kinds or objects.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from sandbox.errors import Cause
from sandbox.validation import names

REQUIRED = "FieldValueRequired"
INVALID = "FieldValueInvalid"
NOT_SUPPORTED = "FieldValueNotSupported"
DUPLICATE = "FieldValueDuplicate"
FORBIDDEN = "FieldValueForbidden"
TOO_LONG = "FieldValueTooLong"
NOT_FOUND = "FieldValueNotFound"

NONNEGATIVE = "must be greater than or equal to 0"
IMMUTABLE = "field is immutable"

# Kubernetes prints whole structs; a pod template would make an unreadable message.
_MAX_VALUE_CHARS = 200


def render(value: object) -> str:
    """A bad value as Kubernetes prints it: numbers bare, strings quoted, structures as JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if value is None:
        return "null"
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    if isinstance(value, str) or len(text) <= _MAX_VALUE_CHARS:
        return text
    return text[:_MAX_VALUE_CHARS] + "..."


def required(path: str, detail: str = "") -> Cause:
    return Cause(path, "Required value" + (f": {detail}" if detail else ""), REQUIRED)


def invalid(path: str, value: object, detail: str) -> Cause:
    return Cause(path, f"Invalid value: {render(value)}: {detail}", INVALID)


def invalid_each(path: str, value: object, details: Iterable[str]) -> list[Cause]:
    return [invalid(path, value, detail) for detail in details]


def not_supported(path: str, value: object, supported: Iterable[str]) -> Cause:
    choices = ", ".join(render(s) for s in supported)
    return Cause(
        path, f"Unsupported value: {render(value)}: supported values: {choices}", NOT_SUPPORTED
    )


def duplicate(path: str, value: object, detail: str = "") -> Cause:
    tail = f": {detail}" if detail else ""
    return Cause(path, f"Duplicate value: {render(value)}{tail}", DUPLICATE)


def forbidden(path: str, detail: str) -> Cause:
    return Cause(path, f"Forbidden: {detail}", FORBIDDEN)


def too_long(path: str, limit: int) -> Cause:
    return Cause(path, f"Too long: may not be more than {limit} bytes", TOO_LONG)


def not_found(path: str, value: object) -> Cause:
    return Cause(path, f"Not found: {render(value)}", NOT_FOUND)


def immutable(path: str, new: object, old: object) -> list[Cause]:
    """`field is immutable` when a field changed; semantic JSON equality, as DeepEqual does."""
    return [] if new == old else [invalid(path, new, IMMUTABLE)]


def nonnegative(path: str, value: int | None) -> list[Cause]:
    return [invalid(path, value, NONNEGATIVE)] if value is not None and value < 0 else []


def int_or_percent(path: str, value: object, *, at_most_100: bool = False) -> list[Cause]:
    """An IntOrString that counts pods: a non-negative integer or a percentage like `25%`."""
    if value is None:
        return []
    if isinstance(value, int) and not isinstance(value, bool):
        return nonnegative(path, value)
    if not isinstance(value, str):
        return [invalid(path, value, "must be an integer or percentage (e.g '5%')")]
    if problems := names.percent(value):
        return invalid_each(path, value, problems)
    if at_most_100 and int(value[:-1]) > 100:
        return [invalid(path, value, "must not be greater than 100%")]
    return []
