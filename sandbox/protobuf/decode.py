"""Turn a Kubernetes protobuf request body into the JSON-shaped dict the same object would be.

kubectl's typed commands send `application/vnd.kubernetes.protobuf` and never retry in JSON, so
the HTTP layer hands such bodies here. A body is the magic `k8s\\x00` followed by a
`runtime.Unknown` envelope: {1 typeMeta {1 apiVersion, 2 kind}, 2 raw, 3 contentEncoding,
4 contentType}; `raw` is the object's own message, walked with the layout tables.

The JSON shape is what Go's encoder prints for the decoded object (what `kubectl -o json`
shows): zero scalars are dropped unless the table marks them `!`, structs are always printed,
unset times are dropped. Unknown field numbers are skipped, as Go's decoder does. A malformed
body raises `BadRequest`; a kind without tables raises `UnsupportedMediaType`.

This module knows the envelope and the walk; it knows nothing of HTTP, storage or validation.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from sandbox.errors import BadRequest, UnsupportedMediaType
from sandbox.protobuf import values
from sandbox.protobuf.layout import Catalog, Field
from sandbox.protobuf.messages import catalog
from sandbox.protobuf.wire import LENGTH, VARINT, WireError, fields, packed_varints, signed

MAGIC = b"k8s\x00"

_CONVERT: Mapping[str, Callable[[bytes], Any]] = {
    "string": values.text,
    "bytes": values.b64,
    "Quantity": values.quantity,
    "IntOrString": values.int_or_string,
    "Time": functools.partial(values.timestamp, micro=False),
    "MicroTime": functools.partial(values.timestamp, micro=True),
    "Duration": values.duration,
    "RawJSON": values.raw_json,
    "Strings": values.strings,
}
# Kinds whose zero value `omitempty` drops; messages and wrappers (IntOrString...) always print.
_OMITTABLE = frozenset({"string", "int", "bool", "bytes", "Time", "MicroTime", "RawJSON"})


def decode_object(body: bytes) -> dict[str, Any]:
    """Decode a protobuf request body (`k8s\\x00` + runtime.Unknown) into a JSON-shaped dict.

    `apiVersion` and `kind` come from the envelope's TypeMeta. Raises `BadRequest` for a
    malformed body and `UnsupportedMediaType` for a kind the sandbox has no tables for.
    """
    api_version, kind, raw = _unwrap(body)
    tables = catalog()
    root = tables.root(api_version, kind)
    if root is None:
        raise UnsupportedMediaType(
            f"the sandbox cannot decode {kind} ({api_version}) from protobuf; "
            "send it as application/json instead"
        )
    try:
        obj = _Walker(tables).message(raw, root, kind)
    except WireError as err:
        raise BadRequest(f"the protobuf body of this {kind} is malformed: {err}") from err
    return {"apiVersion": api_version, "kind": kind, **obj}


def _unwrap(body: bytes) -> tuple[str, str, bytes]:
    """(apiVersion, kind, raw object bytes) from the magic and the runtime.Unknown envelope."""
    if not body.startswith(MAGIC):
        raise BadRequest(
            "the request body is not a Kubernetes protobuf message: it must start with the "
            "4-byte magic k8s\\x00; send JSON with Content-Type application/json instead"
        )
    try:
        envelope = _length_fields(body[len(MAGIC) :])
        type_meta = _length_fields(envelope.get(1, b""))
    except WireError as err:
        raise BadRequest(f"the protobuf envelope (runtime.Unknown) is malformed: {err}") from err
    api_version, kind = (values.text(type_meta.get(n, b"")) for n in (1, 2))
    if not kind:
        raise BadRequest("the protobuf envelope names no kind: its typeMeta.kind is empty")
    encoding = values.text(envelope.get(3, b""))
    if encoding:
        raise UnsupportedMediaType(
            f"protobuf bodies with content encoding {encoding!r} are not supported; "
            "send the object unencoded or as application/json"
        )
    return api_version, kind, envelope.get(2, b"")


def _length_fields(data: bytes) -> dict[int, bytes]:
    found: dict[int, bytes] = {}
    for number, wire_type, value in fields(data):
        if number <= 4:
            if wire_type != LENGTH or not isinstance(value, bytes):
                raise WireError(f"field {number} should be length-delimited")
            found[number] = value
    return found


class _Walker:
    """Walks one body; holds the tables so helpers need not pass them around."""

    def __init__(self, tables: Catalog) -> None:
        self.layouts = tables.layouts

    def message(self, data: bytes, name: str, where: str) -> dict[str, Any]:
        layout = self.layouts[name]
        try:
            parsed = list(fields(data))
        except WireError as err:
            raise WireError(f"{where}: {err}") from err
        out: dict[str, Any] = {}
        for number, wire_type, value in parsed:
            spec = layout.get(number)
            if spec is not None:  # unknown numbers are newer fields: skip them, as Go does
                self._store(out, spec, wire_type, value, where)
        _drop_zeros(out, layout)
        return out

    def _store(
        self, out: dict[str, Any], spec: Field, wire_type: int, value: int | bytes, where: str
    ) -> None:
        path = f"{where}.{spec.name}" if spec.name else where
        if spec.inline:
            out.update(self.message(_length(value, wire_type, path), spec.message, path))
        elif spec.mapped:
            key, item = self._entry(spec, _length(value, wire_type, path), path)
            out.setdefault(spec.name, {})[key] = item
        elif spec.repeated and wire_type == LENGTH and spec.kind in ("int", "bool"):
            numbers = packed_varints(_length(value, wire_type, path))
            out.setdefault(spec.name, []).extend(_scalar(spec, n) for n in numbers)
        elif spec.repeated:
            out.setdefault(spec.name, []).append(self._value(spec, wire_type, value, path))
        else:
            out[spec.name] = self._value(spec, wire_type, value, path)

    def _value(self, spec: Field, wire_type: int, value: int | bytes, path: str) -> Any:
        if spec.kind in ("int", "bool"):
            if wire_type != VARINT or not isinstance(value, int):
                raise WireError(f"{path}: expected a varint, got wire type {wire_type}")
            return _scalar(spec, value)
        raw = _length(value, wire_type, path)
        if spec.kind == "message":
            return self.message(raw, spec.message, path)
        try:
            return _CONVERT[spec.kind](raw)
        except WireError as err:
            raise WireError(f"{path}: {err}") from err

    def _entry(self, spec: Field, data: bytes, path: str) -> tuple[str, Any]:
        """One map entry {1 key, 2 value}; a missing value is the zero value, as in Go."""
        key = ""
        item: tuple[int, int | bytes] = (
            (VARINT, 0) if spec.kind in ("int", "bool") else (LENGTH, b"")
        )
        try:
            entry = list(fields(data))
        except WireError as err:
            raise WireError(f"{path}: {err}") from err
        for number, wire_type, value in entry:
            if number == 1:
                key = values.text(_length(value, wire_type, f"{path} key"))
            elif number == 2:
                item = (wire_type, value)
        return key, self._value(spec, item[0], item[1], f"{path}[{key}]")


def _scalar(spec: Field, value: int) -> int | bool:
    return signed(value) if spec.kind == "int" else value != 0


def _length(value: int | bytes, wire_type: int, path: str) -> bytes:
    if wire_type != LENGTH or not isinstance(value, bytes):
        raise WireError(f"{path}: expected length-delimited data, got wire type {wire_type}")
    return value


def _drop_zeros(out: dict[str, Any], layout: Mapping[int, Field]) -> None:
    """Apply Go's `omitempty`: drop zero scalars unless marked `!`; nil `!` lists print null."""
    for spec in layout.values():
        if spec.inline:
            continue
        if spec.name not in out:
            if spec.keep and (spec.repeated or spec.mapped):
                out[spec.name] = None
            continue
        if spec.keep or spec.repeated or spec.mapped or spec.kind not in _OMITTABLE:
            continue
        value = out[spec.name]
        if value is None or (spec.kind != "RawJSON" and value in ("", 0)):
            del out[spec.name]
