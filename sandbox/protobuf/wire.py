"""The protobuf wire format, read-only: varints, fixed-width numbers and length-delimited runs.

Only what decoding needs: split a message into (field number, wire type, raw value) triples,
and read packed varints. Groups (wire types 3 and 4) are refused: no Kubernetes message uses
them. This module knows nothing about message layouts or Kubernetes; malformed input raises
`WireError`, which callers turn into an HTTP error.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

VARINT: Final = 0
FIXED64: Final = 1
LENGTH: Final = 2
FIXED32: Final = 5

_MAX_VARINT_BYTES = 10
_UINT64 = 1 << 64
_INT64_SIGN = 1 << 63


class WireError(ValueError):
    """The bytes are not a well-formed protobuf message."""


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """The unsigned varint at `pos`, and the position just after it."""
    result = 0
    for i in range(_MAX_VARINT_BYTES):
        if pos + i >= len(data):
            raise WireError("truncated varint")
        byte = data[pos + i]
        result |= (byte & 0x7F) << (7 * i)
        if byte < 0x80:
            if result >= _UINT64:
                raise WireError("varint overflows 64 bits")
            return result, pos + i + 1
    raise WireError("varint longer than 10 bytes")


def signed(value: int) -> int:
    """Reinterpret a 64-bit varint as two's complement, as Go does for int32 and int64."""
    return value - _UINT64 if value >= _INT64_SIGN else value


def fields(data: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """Each field of one message in wire order: (number, wire type, int or bytes value)."""
    pos, end = 0, len(data)
    while pos < end:
        key, pos = read_varint(data, pos)
        number, wire_type = key >> 3, key & 7
        if number == 0:
            raise WireError("field number 0 is invalid")
        value: int | bytes
        if wire_type == VARINT:
            value, pos = read_varint(data, pos)
        elif wire_type == LENGTH:
            size, pos = read_varint(data, pos)
            if size > end - pos:
                raise WireError(f"field {number} claims {size} bytes but {end - pos} remain")
            value, pos = data[pos : pos + size], pos + size
        elif wire_type in (FIXED64, FIXED32):
            width = 8 if wire_type == FIXED64 else 4
            if width > end - pos:
                raise WireError(f"truncated fixed-width field {number}")
            value, pos = int.from_bytes(data[pos : pos + width], "little"), pos + width
        else:
            raise WireError(f"field {number} uses unsupported wire type {wire_type}")
        yield number, wire_type, value


def packed_varints(data: bytes) -> list[int]:
    """The varints of a packed repeated field, in order."""
    values: list[int] = []
    pos = 0
    while pos < len(data):
        value, pos = read_varint(data, pos)
        values.append(value)
    return values
