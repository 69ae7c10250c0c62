"""Unknown-field detection behind `fieldValidation=Strict|Warn|Ignore` on create, update and patch.

Kubernetes drops fields it cannot place: built-in kinds decode strictly into their Go types,
custom resources are pruned against the CRD's structural schema. Either way the dropped paths
are "unknown fields", spelled as the API server spells them: dots between object keys and map
keys, `[i]` for list items (`spec.template.spec.containers[0].imagee`), in document order.

Repeated keys in a body ("duplicate field") are judged by the same modes: the parser that saw
them (`sandbox.bodies`) words them, and `decode` fails or warns with them ahead of the unknown
fields, as kube-apiserver lists them. Wrong value types are not a matter of mode: those fail
every request, in `sandbox.fieldtypes`.

Schemas are compiled once into `_Shape` trees (a property map per object node) so a check walks
only the object, never the schema: built-in definitions are compiled lazily and shared, CRD
schemas are compiled per distinct schema. This module knows schemas and Status errors only;
it must not know HTTP, storage, or how a warning travels to the client.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from sandbox.errors import BadRequest
from sandbox.registry import ResourceType
from sandbox.schemas import REF_PREFIX, definition_name, definitions

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
MODES = ("Ignore", "Warn", "Strict")


@dataclass(eq=False)
class _Shape:
    """What an object or list node accepts. A `None` child means "anything goes below here"."""

    fields: dict[str, _Shape | None] = field(default_factory=dict)
    values: _Shape | None = None  # schema of keys outside `fields` when the node is a map
    items: _Shape | None = None
    closed: bool = False  # keys outside `fields` are unknown (unless this is a map)

    @property
    def empty(self) -> bool:
        return not self.fields and self.values is None and self.items is None and not self.closed


class _Compiler:
    """Compiles schema nodes into shapes, in one of two dialects.

    Built-in definitions close an object only when it lists properties: Go structs without
    fields in the definitions (RawExtension, FieldsV1) hold free-form JSON. Structural CRD
    schemas close every `type: object` node, because the API server prunes whatever they
    do not name, unless `x-kubernetes-preserve-unknown-fields` says otherwise.
    """

    def __init__(self, *, structural: bool, object_meta: _Shape | None = None) -> None:
        self._structural = structural
        self._object_meta = object_meta
        self._named: dict[str, _Shape | None] = {}

    def named(self, name: str) -> _Shape | None:
        if name in self._named:
            return self._named[name]
        shape = _Shape()
        # Registered before filling, so recursive definitions (JSONSchemaProps) point back at it.
        self._named[name] = shape
        self._fill(shape, definitions()[name])
        if shape.empty:
            self._named[name] = None
            return None
        return shape

    def node(self, raw: Any) -> _Shape | None:
        if not isinstance(raw, dict):
            return None
        ref = raw.get("$ref")
        if not self._structural and isinstance(ref, str) and ref.startswith(REF_PREFIX):
            return self.named(ref[len(REF_PREFIX) :])
        shape = _Shape()
        self._fill(shape, raw)
        return None if shape.empty else shape

    def _fill(self, shape: _Shape, raw: dict[str, Any]) -> None:
        props = raw.get("properties")
        if isinstance(props, dict):
            shape.fields = {key: self.node(child) for key, child in props.items()}
        extra = raw.get("additionalProperties")
        if isinstance(extra, dict):
            shape.values = self.node(extra)
        items = raw.get("items")
        if isinstance(items, dict):
            shape.items = self.node(items)
        open_map = extra is True or isinstance(extra, dict)
        preserve = bool(raw.get("x-kubernetes-preserve-unknown-fields"))
        if self._structural:
            shape.closed = not (open_map or preserve) and (
                raw.get("type") == "object" or isinstance(props, dict)
            )
            if raw.get("x-kubernetes-embedded-resource"):
                shape.fields.update(self.type_and_object_meta())
        else:
            shape.closed = not (open_map or preserve) and bool(props)

    def type_and_object_meta(self) -> dict[str, _Shape | None]:
        """The fields every Kubernetes object has, whatever its own schema says."""
        return {"apiVersion": None, "kind": None, "metadata": self._object_meta}


@functools.cache
def _builtin_compiler() -> _Compiler:
    return _Compiler(structural=False)


@functools.lru_cache(maxsize=128)
def _structural_root(schema_json: bytes) -> _Shape:
    """Keyed by the schema's JSON text, so a changed CRD schema can never hit a stale shape."""
    compiler = _Compiler(structural=True, object_meta=_builtin_compiler().named(OBJECT_META))
    root = compiler.node(orjson.loads(schema_json)) or _Shape()
    root.fields.update(compiler.type_and_object_meta())
    return root


def _root_shape(rt: ResourceType) -> _Shape | None:
    if rt.custom:
        if rt.schema is None:
            return None
        return _structural_root(orjson.dumps(rt.schema, option=orjson.OPT_SORT_KEYS))
    name = definition_name(rt.group, rt.version, rt.kind)
    return _builtin_compiler().named(name) if name else None


def _walk(shape: _Shape, value: Any, path: str, out: list[str]) -> None:
    if isinstance(value, dict):
        for key, child in value.items():
            where = f"{path}.{key}" if path else key
            if key in shape.fields:
                sub = shape.fields[key]
            elif shape.values is not None or not shape.closed:
                sub = shape.values
            else:
                out.append(where)
                continue
            if sub is not None and isinstance(child, dict | list):
                _walk(sub, child, where, out)
    elif isinstance(value, list) and shape.items is not None:
        for index, item in enumerate(value):
            if isinstance(item, dict | list):
                _walk(shape.items, item, f"{path}[{index}]", out)


def unknown_fields(rt: ResourceType, obj: dict[str, Any]) -> list[str]:
    """Paths of the fields in `obj` that the kind's schema does not know; [] without a schema."""
    root = _root_shape(rt)
    if root is None:
        return []
    found: list[str] = []
    _walk(root, obj, "", found)
    return found


def prune(rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` without its unknown fields, as the API server stores it; `obj` itself if none."""
    root = _root_shape(rt)
    if root is None:
        return obj
    pruned = _pruned(root, obj)
    return pruned if isinstance(pruned, dict) else obj


def _pruned(shape: _Shape, value: Any) -> Any:
    """`value` without unknown keys, sharing every untouched subtree (never mutating it)."""
    if isinstance(value, dict):
        out: dict[str, Any] | None = None
        for key, child in value.items():
            if key in shape.fields:
                sub = shape.fields[key]
            elif shape.values is not None or not shape.closed:
                sub = shape.values
            else:
                out = out if out is not None else dict(value)
                del out[key]
                continue
            if sub is not None and isinstance(child, dict | list):
                new_child = _pruned(sub, child)
                if new_child is not child:
                    out = out if out is not None else dict(value)
                    out[key] = new_child
        return value if out is None else out
    if isinstance(value, list) and shape.items is not None:
        items = [
            _pruned(shape.items, item) if isinstance(item, dict | list) else item for item in value
        ]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    return value


def enforce(rt: ResourceType, obj: dict[str, Any], mode: str) -> list[str]:
    """Apply a `fieldValidation` mode: raise for Strict, return warning texts for Warn.

    An empty mode means the parameter was absent and is treated like Ignore.
    """
    _check_mode(mode)
    if mode in ("", "Ignore"):
        return []
    return _judge(rt, unknown_fields(rt, obj), mode)


def decode(
    rt: ResourceType, obj: dict[str, Any], mode: str, *, duplicates: Sequence[str] = ()
) -> tuple[dict[str, Any], list[str]]:
    """What the API server keeps of `obj` under `mode`, and the warnings to send: `enforce`
    then `prune`, walking the object once when nothing in it is unknown (the usual case).

    `duplicates` are the body's repeated keys, already worded by whoever parsed it; like
    unknown fields they fail a Strict request and are warnings under Warn.
    """
    _check_mode(mode)
    unknown = unknown_fields(rt, obj)
    if not unknown and not duplicates:
        return obj, []
    warnings = [] if mode in ("", "Ignore") else _judge(rt, unknown, mode, duplicates)
    return (prune(rt, obj) if unknown else obj), warnings


def _check_mode(mode: str) -> None:
    if mode not in MODES and mode != "":
        raise BadRequest(
            f'fieldValidation must be one of Ignore, Warn or Strict, not "{mode}"; '
            "omit it to skip unknown-field checks"
        )


def _judge(
    rt: ResourceType, unknown: list[str], mode: str, duplicates: Sequence[str] = ()
) -> list[str]:
    # kube-apiserver lists a patch's duplicates before the unknown fields of the result.
    problems = [*duplicates, *(f'unknown field "{path}"' for path in unknown)]
    if mode == "Warn" or not problems:
        return problems
    raise BadRequest(
        f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: '
        f"strict decoding error: {', '.join(problems)}"
    )
