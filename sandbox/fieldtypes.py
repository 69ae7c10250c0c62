"""Typed decoding of built-in kinds: every field takes only the JSON its Go type can hold.

kube-apiserver decodes each write into Go structs before anything else looks at it, so a value
of the wrong JSON type, or a number its Go type cannot hold, fails the request with 400 in
every `fieldValidation` mode, worded as Go's encoding/json words it:

    Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal
    string into Go struct field DeploymentSpec.spec.replicas of type int32

Without this the sandbox stored `replicas: "3"` or `2^63`, which kubectl then could not read
back and which set the controllers making pods without end.

The types come from the schema definitions every other check reads (`sandbox.schemas`):
`integer` of format int32 or int64 (with their ranges), `number`, `string` (RFC 3339 for
`date-time`), `boolean`, arrays, maps (`additionalProperties`) and structs (`properties`).
IntOrString and Quantity take either of their two forms; a schema with no type (RawExtension,
FieldsV1, JSON) takes anything. `null` fits everywhere and is stored as Go would leave it: a
null field is unset (so defaulting fills it in), a null list item or map value is its type's
zero value (`containers: [null]` holds one empty container), a null time stays null.
Unknown fields are not judged here: that is `sandbox.fieldcheck`'s job, under the mode.

One leniency, since JSON has a single number type: an integral `3.0` counts as the integer 3
and is stored as `3`, so typed clients can read it back. Custom resources are checked against
their CRD's schema elsewhere (`validation.custom`); only their metadata is typed here.

Schemas compile lazily into `_Type` trees shared by every check. This module knows schemas and
Status errors, nothing of HTTP or storage.
"""

from __future__ import annotations

import datetime
import functools
import re
from dataclasses import dataclass, field
from typing import Any

from sandbox.errors import BadRequest
from sandbox.registry import ResourceType
from sandbox.schemas import REF_PREFIX, definition_name, definitions

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
RANGES = {32: (-(2**31), 2**31 - 1), 64: (-(2**63), 2**63 - 1)}
_RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)\Z")


@dataclass(eq=False)
class _Type:
    """What one field accepts. No `kinds` means any JSON value."""

    go: str = ""  # the Go type, for messages: int32, v1.PodSpec, map[string]string, []string
    kinds: frozenset[str] = frozenset()  # JSON kinds: string integer number boolean array object
    bits: int = 0  # an integer's width
    time: bool = False  # a string that must be an RFC 3339 time
    struct: str = ""  # a named struct's Go name, as "Go struct field <struct>.<path>" prints it
    fields: dict[str, _Type] = field(default_factory=dict)
    values: _Type | None = None  # a map's values
    items: _Type | None = None


_SPECIAL = {
    INT_OR_STRING: _Type(go="intstr.IntOrString", kinds=frozenset({"string", "integer"}), bits=32),
    QUANTITY: _Type(go="resource.Quantity", kinds=frozenset({"string", "number"})),
}


class _Compiler:
    def __init__(self) -> None:
        self._named: dict[str, _Type] = dict(_SPECIAL)

    def named(self, name: str) -> _Type:
        if name in self._named:
            return self._named[name]
        package, short = name.split(".")[-2:]
        compiled = _Type(go=f"{package}.{short}")
        # Registered before filling, so recursive definitions (JSONSchemaProps) point back at it.
        self._named[name] = compiled
        self._fill(compiled, definitions()[name], struct=short)
        return compiled

    def node(self, raw: Any) -> _Type:
        if not isinstance(raw, dict):
            return _Type()
        ref = raw.get("$ref")
        if isinstance(ref, str) and ref.startswith(REF_PREFIX):
            return self.named(ref[len(REF_PREFIX) :])
        all_of = raw.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1:
            return self.node(all_of[0])
        compiled = _Type()
        self._fill(compiled, raw, struct="")
        return compiled

    def _fill(self, compiled: _Type, raw: dict[str, Any], *, struct: str) -> None:
        declared = raw.get("type")
        kinds = {declared} if isinstance(declared, str) else set(declared or ())
        kinds.discard("null")
        if "object" in kinds:
            props, extra = raw.get("properties"), raw.get("additionalProperties")
            if isinstance(props, dict) and props:
                compiled.struct = struct
                compiled.fields = {key: self.node(child) for key, child in props.items()}
            elif isinstance(extra, dict):
                compiled.values = self.node(extra)
                compiled.go = compiled.go or f"map[string]{compiled.values.go}"
            else:
                kinds = set()  # free-form JSON (RawExtension, FieldsV1)
        if "array" in kinds:
            compiled.items = self.node(raw.get("items"))
            compiled.go = compiled.go or f"[]{compiled.items.go}"
        if "integer" in kinds:
            compiled.bits = 32 if raw.get("format") == "int32" else 64
        compiled.time = "string" in kinds and raw.get("format") == "date-time"
        compiled.kinds = frozenset(kinds)
        compiled.go = compiled.go or _go_scalar(compiled)


def _go_scalar(compiled: _Type) -> str:
    if compiled.kinds == {"integer"}:
        return f"int{compiled.bits}"
    only = next(iter(compiled.kinds)) if len(compiled.kinds) == 1 else ""
    return {"string": "string", "number": "float64", "boolean": "bool"}.get(only, "")


@functools.cache
def _compiler() -> _Compiler:
    return _Compiler()


@functools.cache
def _root(group: str, version: str, kind: str, custom: bool) -> _Type | None:
    if custom:
        meta = _compiler().named(OBJECT_META)
        return _Type(go=kind, kinds=frozenset({"object"}), struct=kind, fields={"metadata": meta})
    name = definition_name(group, version, kind)
    return _compiler().named(name) if name else None


def decode(rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` as a typed decode leaves it (integral floats in integer fields become integers),
    or BadRequest naming the first value its field's Go type cannot hold."""
    return decode_as(rt.group, rt.version, rt.kind, obj, custom=rt.custom)


def decode_as(
    group: str, version: str, kind: str, obj: dict[str, Any], *, custom: bool = False
) -> dict[str, Any]:
    """`decode` for a body of another kind than the resource's (a subresource's Scale)."""
    root = _root(group, version, kind, custom)
    if root is None:
        return obj
    try:
        checked: dict[str, Any] = _checked(root, obj, "", root.struct)
    except _Mismatch as mismatch:
        raise BadRequest(
            f'{kind} in version "{version}" cannot be handled as a {kind}: {mismatch}'
        ) from None
    return checked


class _Mismatch(Exception):
    """A value of the wrong type, worded as Go's JSON decoder words it."""


def _checked(expected: _Type, value: Any, path: str, struct: str) -> Any:
    """`value` if it fits `expected`, or a copy as Go's decoder would leave it (sharing every
    untouched subtree); raises _Mismatch when it cannot hold the value."""
    if value is None or not expected.kinds:
        return value
    if isinstance(value, dict):
        return _object(expected, value, path, struct)
    if isinstance(value, list):
        if "array" not in expected.kinds:
            raise _mismatch("array", expected, path, struct)
        if expected.items is None:
            return value
        items = [_element(expected.items, item, path, struct) for item in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    return _scalar(expected, value, path, struct)


def _object(expected: _Type, value: dict[str, Any], path: str, struct: str) -> Any:
    if "object" not in expected.kinds:
        raise _mismatch("object", expected, path, struct)
    inner = expected.struct or struct
    out: dict[str, Any] | None = None
    for key, child in value.items():
        if expected.values is not None:
            new_child = _element(expected.values, child, path, inner)
        elif key not in expected.fields:
            continue  # an unknown field: fieldcheck's business
        elif child is None and _unset_by_null(expected.fields[key]):
            out = out if out is not None else dict(value)
            del out[key]
            continue
        else:
            where = f"{path}.{key}" if path else key
            new_child = _checked(expected.fields[key], child, where, inner)
        if new_child is not child:
            out = out if out is not None else dict(value)
            out[key] = new_child
    return value if out is None else out


def _element(expected: _Type, value: Any, path: str, struct: str) -> Any:
    """A list item or map value: null becomes the zero value of its type, as in Go."""
    if value is None:
        return _zero(expected)
    return _checked(expected, value, path, struct)


def _unset_by_null(expected: _Type) -> bool:
    """Go decodes a null field as unset, and defaulting then fills it in (`replicas: null` is
    stored as the default 1); only times stay null, as Go writes them (`creationTimestamp:
    null`), and free-form JSON keeps its null."""
    return bool(expected.kinds) and not expected.time


def _zero(expected: _Type) -> Any:
    kinds = expected.kinds
    if "object" in kinds and (expected.fields or expected.values is not None):
        return {}
    if kinds == {"string"} and not expected.time:
        return ""
    if kinds and kinds <= {"integer", "number"}:
        return 0
    if kinds == {"boolean"}:
        return False
    return None


def _scalar(expected: _Type, value: Any, path: str, struct: str) -> Any:
    kinds = expected.kinds
    if isinstance(value, bool):
        if "boolean" not in kinds:
            raise _mismatch("bool", expected, path, struct)
        return value
    if isinstance(value, int | float):
        return _number(expected, value, path, struct)
    if not isinstance(value, str) or "string" not in kinds:
        raise _mismatch("string", expected, path, struct)
    if expected.time and not _is_time(value):
        raise _Mismatch(
            f'parsing time "{value}" as "2006-01-02T15:04:05Z07:00": cannot parse "{value}" as '
            '"2006"'
        )
    return value


def _number(expected: _Type, value: int | float, path: str, struct: str) -> Any:
    if "integer" in expected.kinds and expected.bits:
        low, high = RANGES[expected.bits]
        whole = isinstance(value, int) or value.is_integer()
        if whole and low <= value <= high:
            return int(value)
        if "number" not in expected.kinds:
            raise _mismatch(f"number {value}", expected, path, struct)
    if "number" not in expected.kinds:
        raise _mismatch("number", expected, path, struct)
    return value


def _is_time(text: str) -> bool:
    if not _RFC3339.match(text):
        return False
    try:
        datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def _mismatch(what: str, expected: _Type, path: str, struct: str) -> _Mismatch:
    return _Mismatch(
        f"json: cannot unmarshal {what} into Go struct field {struct}.{path} of type "
        f"{expected.go or 'interface {}'}"
    )
