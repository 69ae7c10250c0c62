"""The protobuf wire format, write side: a `Writer` appends fields and hands back message bytes.

The mirror of `wire.py` for the few messages the sandbox must *send* in protobuf (the gnostic
OpenAPI v2 document kubectl asks for). A nested message is written into its own `Writer` first
and added with `message()`, because its length prefix must precede it.

Every call writes its field, even a proto3 default (empty string, False, 0): whether a field is
present is the caller's decision, and a `oneof` member must be written even when its value is the
default. This module knows nothing of message layouts, OpenAPI or Kubernetes.
"""

from __future__ import annotations

import struct

from sandbox.protobuf.wire import FIXED64, LENGTH, VARINT

_UINT64 = 1 << 64
_ONE_BYTE = tuple(bytes((n,)) for n in range(0x80))


def varint(value: int) -> bytes:
    """An unsigned varint; a negative int64 becomes its 64-bit two's complement, as in Go."""
    if 0 <= value < 0x80:  # most keys and lengths: one byte
        return _ONE_BYTE[value]
    if value < 0:
        value += _UINT64
    if not 0 <= value < _UINT64:
        raise ValueError(f"{value} does not fit in 64 bits")
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


class Writer:
    """The fields of one message, in the order they are written."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def _key(self, number: int, wire_type: int) -> None:
        if number < 1:
            raise ValueError(f"field number {number} is invalid")
        self._parts.append(varint(number << 3 | wire_type))

    def integer(self, number: int, value: int) -> Writer:
        """int32, int64, uint32, uint64 or an enum (wire type varint)."""
        self._key(number, VARINT)
        self._parts.append(varint(value))
        return self

    def boolean(self, number: int, value: bool) -> Writer:
        return self.integer(number, int(value))

    def double(self, number: int, value: float) -> Writer:
        self._key(number, FIXED64)
        self._parts.append(struct.pack("<d", value))
        return self

    def raw(self, number: int, value: bytes) -> Writer:
        """A `bytes` field, or an already-encoded message."""
        self._key(number, LENGTH)
        self._parts.append(varint(len(value)))
        self._parts.append(value)
        return self

    def string(self, number: int, value: str) -> Writer:
        return self.raw(number, value.encode("utf-8"))

    def strings(self, number: int, values: list[str]) -> Writer:
        """A repeated string field, one entry per value."""
        for value in values:
            self.string(number, value)
        return self

    def message(self, number: int, body: Writer) -> Writer:
        return self.raw(number, body.to_bytes())

    def extend(self, encoded: bytes) -> Writer:
        """Append fields encoded elsewhere (a cached run of repeated entries, say) verbatim."""
        self._parts.append(encoded)
        return self

    def to_bytes(self) -> bytes:
        return b"".join(self._parts)
