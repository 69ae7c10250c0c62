"""The Kubernetes 1.37 object schemas, loaded once from the `kubernetes-validate` package.

These JSON-Schema definitions carry the real API's descriptions and extensions
(`x-kubernetes-group-version-kind`, `x-kubernetes-patch-merge-key`, `x-kubernetes-patch-strategy`,
`x-kubernetes-list-type`, `x-kubernetes-list-map-keys`), so one source feeds the OpenAPI documents,
strict field validation, strategic merge patch and server-side apply. References use `#/$defs/NAME`.

Custom resources carry their own structural schema (from the CRD) with no references; `SchemaNode`
hides the difference so walkers can descend by property or item without caring where it came from.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import orjson

KUBERNETES_VERSION = "1.37.0"
REF_PREFIX = "#/$defs/"


@functools.cache
def definitions() -> dict[str, dict[str, Any]]:
    """All 862 definitions, keyed by name such as `io.k8s.api.apps.v1.Deployment`."""
    root = resources.files("kubernetes_validate").joinpath(
        "kubernetes-json-schema", f"v{KUBERNETES_VERSION}-local", "_definitions.json"
    )
    data: dict[str, Any] = orjson.loads(root.read_bytes())
    defs: dict[str, dict[str, Any]] = data["$defs"]
    return defs


@functools.cache
def _gvk_index() -> dict[tuple[str, str, str], str]:
    index: dict[tuple[str, str, str], str] = {}
    for name, schema in definitions().items():
        for gvk in schema.get("x-kubernetes-group-version-kind", ()):
            index[(gvk["group"], gvk["version"], gvk["kind"])] = name
    return index


def definition_name(group: str, version: str, kind: str) -> str | None:
    return _gvk_index().get((group, version, kind))


def resolve(node: dict[str, Any]) -> dict[str, Any]:
    """Follow `$ref` (and a single-element `allOf`) to the schema it points at."""
    while True:
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(REF_PREFIX):
            node = definitions()[ref[len(REF_PREFIX) :]]
            continue
        all_of = node.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1:
            node = all_of[0]
            continue
        return node


@dataclass(frozen=True, eq=False)
class SchemaNode:
    """A position in a schema tree: descend with `.prop(name)`, `.items()`, `.values()`.

    Children are built once and kept, so walks over the shared built-in trees (every write
    walks one for managedFields) resolve each `$ref` only the first time.
    """

    raw: dict[str, Any]
    _children: dict[str, SchemaNode | None] = field(default_factory=dict, repr=False)

    @functools.cached_property
    def schema(self) -> dict[str, Any]:
        return resolve(self.raw)

    def prop(self, name: str) -> SchemaNode | None:
        key = "p:" + name
        if key not in self._children:
            child = (self.schema.get("properties") or {}).get(name)
            self._children[key] = self.values() if child is None else SchemaNode(child)
        return self._children[key]

    def items(self) -> SchemaNode | None:
        return self._child("items")

    def values(self) -> SchemaNode | None:
        """The schema of a map's values (`additionalProperties`), if this node is a map."""
        return self._child("additionalProperties")

    def _child(self, keyword: str) -> SchemaNode | None:
        if keyword not in self._children:
            child = self.schema.get(keyword)
            self._children[keyword] = SchemaNode(child) if isinstance(child, dict) else None
        return self._children[keyword]

    def ext(self, name: str) -> Any:
        """An `x-kubernetes-*` extension, looked up on the property node before resolving."""
        if name in self.raw:
            return self.raw[name]
        return self.schema.get(name)

    @property
    def patch_strategy(self) -> str:
        return str(self.ext("x-kubernetes-patch-strategy") or "")

    @property
    def patch_merge_key(self) -> str | None:
        key = self.ext("x-kubernetes-patch-merge-key")
        return str(key) if key else None

    @property
    def list_type(self) -> str | None:
        kind = self.ext("x-kubernetes-list-type")
        return str(kind) if kind else None

    @property
    def list_map_keys(self) -> tuple[str, ...]:
        return tuple(self.ext("x-kubernetes-list-map-keys") or ())

    @property
    def preserves_unknown_fields(self) -> bool:
        return bool(self.ext("x-kubernetes-preserve-unknown-fields"))


@functools.cache
def for_kind(group: str, version: str, kind: str) -> SchemaNode | None:
    """The root schema of a built-in kind, or None for kinds the definitions do not know."""
    name = definition_name(group, version, kind)
    return SchemaNode(definitions()[name]) if name else None
