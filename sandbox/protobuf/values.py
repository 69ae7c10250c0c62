"""JSON forms of the apimachinery types whose protobuf and JSON shapes differ.

`Quantity` is a message holding its string; `IntOrString` is a tagged union; `Time` and
`MicroTime` are {seconds, nanos} printed as RFC 3339 in UTC; `Duration` is nanoseconds printed
the way Go's `time.Duration.String` does; `bytes` fields print as base64 and raw JSON fields
(RawExtension, FieldsV1) as the JSON they carry. Each function takes the field's raw protobuf
value and knows nothing about message layouts; bad input raises `WireError`.
"""

from __future__ import annotations

import base64
import datetime
import json
from typing import Any

from sandbox.protobuf.wire import LENGTH, WireError, fields, signed

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_NANOS = 1_000_000_000


def text(raw: bytes) -> str:
    # Go's JSON encoder prints invalid UTF-8 as U+FFFD rather than failing; do the same.
    return raw.decode("utf-8", errors="replace")


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def raw_json(raw: bytes) -> Any:
    """RawExtension and FieldsV1 wrap their JSON bytes in field 1; print the JSON itself."""
    data = _parts(raw).get(1, b"")
    if not isinstance(data, bytes):
        raise WireError("field 1 should be length-delimited")
    if not data:
        return None
    try:
        return json.loads(data)
    except ValueError as err:
        raise WireError(f"embedded JSON does not parse: {err}") from err


def _parts(raw: bytes) -> dict[int, int | bytes]:
    """A small message's last value per field number (proto semantics for repeated scalars)."""
    return {number: value for number, _, value in fields(raw)}


def _int(parts: dict[int, int | bytes], number: int) -> int:
    value = parts.get(number, 0)
    if not isinstance(value, int):
        raise WireError(f"field {number} should be a varint")
    return signed(value)


def _str(parts: dict[int, int | bytes], number: int) -> str:
    value = parts.get(number, b"")
    if not isinstance(value, bytes):
        raise WireError(f"field {number} should be length-delimited")
    return text(value)


def quantity(raw: bytes) -> str:
    # A zero Quantity prints as "0" in JSON.
    return _str(_parts(raw), 1) or "0"


def int_or_string(raw: bytes) -> int | str:
    parts = _parts(raw)
    return _str(parts, 3) if _int(parts, 1) == 1 else _int(parts, 2)


def timestamp(raw: bytes, *, micro: bool) -> str | None:
    """RFC 3339 in UTC ("2026-01-02T03:04:05Z"); None for the zero time, sent as no fields."""
    if not raw:
        return None
    parts = _parts(raw)
    seconds, nanos = _int(parts, 1), _int(parts, 2)
    try:
        moment = _EPOCH + datetime.timedelta(seconds=seconds)
    except OverflowError as err:
        raise WireError(f"time {seconds}s is out of range") from err
    stamp = (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
        f"T{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}"
    )
    return f"{stamp}.{nanos // 1000:06d}Z" if micro else f"{stamp}Z"


def duration(raw: bytes) -> str:
    return go_duration(_int(_parts(raw), 1))


def go_duration(nanos: int) -> str:
    """Format like Go's `time.Duration.String`: "1h2m3.5s", "1.5ms", "0s"."""
    if nanos == 0:
        return "0s"
    sign, rest = ("-", -nanos) if nanos < 0 else ("", nanos)
    if rest < _NANOS:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if rest >= size:
                return sign + _decimal(rest, size) + unit
    seconds = rest // _NANOS
    out = _decimal(rest % (60 * _NANOS), _NANOS) + "s"
    if seconds >= 60:
        out = f"{seconds // 60 % 60}m" + out
    if seconds >= 3600:
        out = f"{seconds // 3600}h" + out
    return sign + out


def _decimal(value: int, unit: int) -> str:
    whole, fraction = divmod(value, unit)
    if not fraction:
        return str(whole)
    digits = len(str(unit)) - 1
    return f"{whole}." + f"{fraction:0{digits}d}".rstrip("0")


def strings(raw: bytes) -> list[str]:
    """A message wrapping `repeated string items = 1` (ExtraValue), printed as the bare list."""
    items: list[str] = []
    for number, wire_type, value in fields(raw):
        if number == 1:
            if wire_type != LENGTH or not isinstance(value, bytes):
                raise WireError("list item should be length-delimited")
            items.append(text(value))
    return items
