"""Field ownership: field paths, the FieldsV1 format, and `metadata.managedFields` entries.

Kubernetes records which field manager owns which fields as FieldsV1 trees such as
`{"f:spec": {"f:replicas": {}}}`. Here a field path is a tuple of those element strings:

    f:<name>    a struct field or a map key
    k:<json>    a list item named by its list-map keys, e.g. k:{"name":"web"}
    v:<json>    an item of a set-like list, e.g. v:"example.com/cleanup"
    i:<n>       an item of a keyed list that has no keys declared (positional)

In FieldsV1 a `.` child marks the node itself as owned, not only the fields below it.

What counts as one field follows structured-merge-diff, the library behind server-side apply:
lists are atomic unless `x-kubernetes-list-type` (or, for older fields, the patch merge
strategy) makes them `map` or `set`; objects are granular unless `x-kubernetes-map-type:
atomic`; without a schema, objects are granular maps and lists are atomic. Identity and
bookkeeping fields (name, namespace, uid, resourceVersion, managedFields, ...) are never owned.

A set of paths comes from one of two walks: `applied_fields` (what an apply configuration
claims) and `compare` (what a write added, changed or removed). `record_update` turns the
latter into ownership for every write that is not an apply; `apply.py` builds on both.

Nothing here knows HTTP, storage, or how an apply merges values.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from sandbox.patches.merge import json_equal
from sandbox.schemas import SchemaNode

Path = tuple[str, ...]
FieldSet = frozenset[Path]

UNTRACKED_METADATA = frozenset(
    [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "selfLink",
        "managedFields",
    ]
)
# kubernetes-validate drops the `default: TCP` Kubernetes declares on the `protocol` key of
# port lists, and the default takes part in the item's identity (k:{"port":80,"protocol":"TCP"}).
KEY_DEFAULTS = (("protocol", "TCP"),)


class Missing(enum.Enum):
    """A field absent from one side of a comparison (distinct from JSON null)."""

    VALUE = enum.auto()


MISSING = Missing.VALUE


@dataclass(frozen=True)
class ManagerEntry:
    """One `metadata.managedFields` entry: who wrote which fields, how and when."""

    manager: str
    operation: str
    api_version: str
    time: str | None
    fields: FieldSet
    subresource: str = ""

    @property
    def identity(self) -> tuple[str, str, str, str]:
        # As in Kubernetes: an applier is one manager whatever apiVersion it applied with.
        version = "" if self.operation == "Apply" else self.api_version
        return (self.manager, self.operation, version, self.subresource)

    def describe(self) -> str:
        """How Kubernetes names the manager in conflict messages."""
        text = json.dumps(self.manager)
        if self.subresource:
            text += f" with subresource {json.dumps(self.subresource)}"
        if self.operation == "Update":
            text += f" using {self.api_version}"
        return text

    def to_dict(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "manager": self.manager,
            "operation": self.operation,
            "apiVersion": self.api_version,
        }
        if self.time is not None:
            entry["time"] = self.time
        entry["fieldsType"] = "FieldsV1"
        entry["fieldsV1"] = _CODEC.tree(self.fields)
        if self.subresource:
            entry["subresource"] = self.subresource
        return entry


@dataclass
class Comparison:
    added: set[Path] = field(default_factory=set)
    removed: set[Path] = field(default_factory=set)
    modified: set[Path] = field(default_factory=set)

    @property
    def touched(self) -> set[Path]:
        return self.added | self.modified

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.modified)


# --- schema shapes -------------------------------------------------------------------------


def list_type(schema: SchemaNode | None) -> str:
    """`atomic`, `set` or `map`, as structured-merge-diff reads a list's schema."""
    if schema is None:
        return "atomic"
    declared = schema.list_type
    if declared:
        return declared
    if "merge" in schema.patch_strategy.split(","):
        return "map" if schema.patch_merge_key else "set"
    return "atomic"


def is_atomic_map(schema: SchemaNode | None) -> bool:
    return schema is not None and schema.ext("x-kubernetes-map-type") == "atomic"


def item_element(item: Any, schema: SchemaNode | None, index: int) -> str:
    """The path element naming one item of a granular list."""
    kind = list_type(schema)
    if kind == "set":
        return "v:" + _json(item)
    keys = _list_keys(schema)
    if kind == "map" and keys and isinstance(item, dict):
        defaults = dict(KEY_DEFAULTS)
        named = {key: item.get(key, defaults.get(key)) for key in keys}
        return "k:" + _json({key: value for key, value in named.items() if value is not None})
    return f"i:{index}"


def _list_keys(schema: SchemaNode | None) -> tuple[str, ...]:
    if schema is None:
        return ()
    if schema.list_map_keys:
        return schema.list_map_keys
    return (schema.patch_merge_key,) if schema.patch_merge_key else ()


def granular_kind(value: Any, schema: SchemaNode | None) -> str | None:
    """`map` or `list` when the value holds separately owned fields, None for a leaf."""
    if isinstance(value, dict) and not is_atomic_map(schema):
        return "map"
    if isinstance(value, list) and list_type(schema) != "atomic":
        return "list"
    return None


def _declared(schema: SchemaNode | None, key: str) -> bool:
    return schema is not None and key in (schema.schema.get("properties") or {})


def child_schema(schema: SchemaNode | None, key: str) -> SchemaNode | None:
    return schema.prop(key) if schema is not None else None


def item_schema(schema: SchemaNode | None) -> SchemaNode | None:
    return schema.items() if schema is not None else None


def keyed_items(values: list[Any], schema: SchemaNode | None) -> dict[str, Any]:
    """A granular list's items by path element, in list order (the first of duplicates wins)."""
    indexed: dict[str, Any] = {}
    for index, item in enumerate(values):
        indexed.setdefault(item_element(item, schema, index), item)
    return indexed


def tracked(path: Path) -> bool:
    """False for identity and bookkeeping fields, which no manager ever owns."""
    if not path or path[0] in ("f:apiVersion", "f:kind"):
        return False
    if path[0] == "f:metadata":
        return len(path) > 1 and path[1][2:] not in UNTRACKED_METADATA
    return True


# --- field sets ----------------------------------------------------------------------------


def applied_fields(config: dict[str, Any], schema: SchemaNode | None) -> FieldSet:
    """The fields an apply configuration claims: leaves, list items, map entries, empties."""
    claimed: set[Path] = set()
    _claim(config, schema, (), claimed)
    return frozenset(path for path in claimed if tracked(path))


def _claim(value: Any, schema: SchemaNode | None, path: Path, claimed: set[Path]) -> None:
    kind = granular_kind(value, schema)
    if kind == "map":
        for key, child in value.items():
            child_path = (*path, f"f:{key}")
            # Struct fields are implied by their leaves; map entries and empties stand alone.
            if child is None or child in ({}, []) or not _declared(schema, key):
                claimed.add(child_path)
            _claim(child, child_schema(schema, key), child_path, claimed)
    elif kind == "list":
        for index, item in enumerate(value):
            item_path = (*path, item_element(item, schema, index))
            claimed.add(item_path)
            _claim(item, item_schema(schema), item_path, claimed)
    elif path:
        claimed.add(path)


def compare(old: Any, new: Any, schema: SchemaNode | None) -> Comparison:
    """What changed from `old` to `new`, as sets of tracked paths."""
    result = Comparison()
    _compare(old, new, schema, (), result)
    for paths in (result.added, result.removed, result.modified):
        paths.difference_update([path for path in paths if not tracked(path)])
    return result


def _compare(old: Any, new: Any, schema: SchemaNode | None, path: Path, out: Comparison) -> None:
    if old is new:
        return  # stored objects are never mutated: a shared subtree is an unchanged one
    if old is MISSING and new is not MISSING:
        _added(new, schema, path, out.added)  # every create takes this path: keep it lean
        return
    kinds = {granular_kind(side, schema) for side in (old, new) if side is not MISSING}
    empty = all(side is MISSING or side in ({}, []) for side in (old, new))
    if len(kinds) != 1 or None in kinds or empty:
        if old is MISSING:
            out.added.add(path)
        elif new is MISSING:
            out.removed.add(path)
        elif not json_equal(old, new):
            out.modified.add(path)
        return
    # A node that appears or disappears is itself a field, except the top-level sections,
    # which Kubernetes' typed objects always carry.
    if len(path) > 1 and old is MISSING:
        out.added.add(path)
    if len(path) > 1 and new is MISSING:
        out.removed.add(path)
    if kinds == {"map"}:
        before, after = _as_map(old), _as_map(new)
        for key in {**before, **after}:
            child = (*path, f"f:{key}")
            _compare(
                before.get(key, MISSING),
                after.get(key, MISSING),
                child_schema(schema, key),
                child,
                out,
            )
    else:
        before = keyed_items(old if old is not MISSING else [], schema)
        after = keyed_items(new if new is not MISSING else [], schema)
        for element in {**before, **after}:
            child = (*path, element)
            _compare(
                before.get(element, MISSING),
                after.get(element, MISSING),
                item_schema(schema),
                child,
                out,
            )


def _added(new: Any, schema: SchemaNode | None, path: Path, added: set[Path]) -> None:
    """`_compare(MISSING, new, ...)`: every field of `new` is added."""
    kind = granular_kind(new, schema)
    if kind is None or new in ({}, []):
        added.add(path)
        return
    if len(path) > 1:
        added.add(path)
    if kind == "map":
        for key, child in new.items():
            _added(child, child_schema(schema, key), (*path, f"f:{key}"), added)
    else:
        items = item_schema(schema)
        for element, item in keyed_items(new, schema).items():
            _added(item, items, (*path, element), added)


def _as_map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


# --- FieldsV1 ------------------------------------------------------------------------------


def to_fields_v1(paths: Iterable[Path]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for path in paths:
        node = tree
        for element in path:
            node = node.setdefault(element, {})
        node["."] = {}
    return _render(tree)


def _render(node: dict[str, Any]) -> dict[str, Any]:
    children = sorted((key for key in node if key != "."), key=_element_order)
    if not children:
        return {}
    rendered: dict[str, Any] = {".": {}} if "." in node else {}
    for key in children:
        rendered[key] = _render(node[key])
    return rendered


def _element_order(element: str) -> tuple[int, int, str]:
    rank = "fkvi".find(element[:1])
    if element.startswith("i:") and element[2:].isdigit():
        return (rank, int(element[2:]), "")
    return (rank, 0, element)


def from_fields_v1(tree: Any, prefix: Path = ()) -> set[Path]:
    paths: set[Path] = set()
    if not isinstance(tree, dict):
        return paths
    for key, child in tree.items():
        if key == ".":
            if prefix:
                paths.add(prefix)
        elif isinstance(child, dict) and child:
            paths |= from_fields_v1(child, (*prefix, key))
        else:
            paths.add((*prefix, key))
    return paths


def path_string(path: Path) -> str:
    """A path as Kubernetes prints it: `.spec.template.spec.containers[name="web"].image`."""
    parts: list[str] = []
    for element in path:
        kind, body = element[:2], element[2:]
        if kind == "f:":
            parts.append(f".{body}")
        elif kind == "k:":
            keys = json.loads(body)
            parts.append("[" + ",".join(f"{k}={_json(v)}" for k, v in keys.items()) + "]")
        elif kind == "v:":
            parts.append(f"[={body}]")
        else:
            parts.append(f"[{body}]")
    return "".join(parts)


class _FieldsCodec:
    """FieldsV1 trees remembered both ways. Most writes leave most entries as they were (a
    kubelet's status write does not touch the scheduler's or the user's fields), so the same
    field set is rendered, and the same stored tree parsed, again and again. Stored objects are
    never mutated, so a tree may be shared by every object version that carries it."""

    LIMIT = 50_000  # remembered trees; past this the memory starts afresh

    def __init__(self) -> None:
        self._trees: dict[FieldSet, dict[str, Any]] = {}
        self._sets: dict[int, tuple[dict[str, Any], FieldSet]] = {}  # id(tree) -> (tree, set)

    def tree(self, fields: FieldSet) -> dict[str, Any]:
        tree = self._trees.get(fields)
        if tree is None:
            if len(self._trees) >= self.LIMIT:
                self._trees.clear()
                self._sets.clear()
            tree = self._trees[fields] = to_fields_v1(fields)
            self._sets[id(tree)] = (tree, fields)  # the strong reference keeps the id unique
        return tree

    def fields(self, tree: Any) -> FieldSet:
        known = self._sets.get(id(tree))
        if known is not None and known[0] is tree:
            return known[1]
        return frozenset(from_fields_v1(tree))


_CODEC = _FieldsCodec()


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# --- managedFields entries -----------------------------------------------------------------


def read_managers(obj: dict[str, Any] | None) -> list[ManagerEntry]:
    raw = ((obj or {}).get("metadata") or {}).get("managedFields") or []
    entries: list[ManagerEntry] = []
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, dict) or not item.get("manager"):
            continue  # Kubernetes drops malformed entries; `[{}]` is how clients reset them.
        entries.append(
            ManagerEntry(
                manager=str(item["manager"]),
                operation=str(item.get("operation") or "Update"),
                api_version=str(item.get("apiVersion") or ""),
                time=item.get("time"),
                fields=_CODEC.fields(item.get("fieldsV1")),
                subresource=str(item.get("subresource") or ""),
            )
        )
    return entries


def with_managers(obj: dict[str, Any], entries: Iterable[ManagerEntry]) -> dict[str, Any]:
    """A copy of `obj` carrying `entries` (empty ones dropped) in Kubernetes' order.

    Only the top level and metadata are copied: nothing else is changed, and API objects are
    never mutated in place, so the rest is safely shared.
    """
    kept = sorted(
        (entry for entry in entries if entry.fields),
        key=lambda e: (e.operation, e.time or "", e.manager, e.api_version, e.subresource),
    )
    metadata = dict(obj.get("metadata") or {})
    result = {**obj, "metadata": metadata}
    if kept:
        metadata["managedFields"] = [entry.to_dict() for entry in kept]
    else:
        metadata.pop("managedFields", None)
    return result


def without_managed_fields(obj: dict[str, Any]) -> dict[str, Any]:
    """A shallow view of `obj` without managedFields (for comparisons; nothing is mutated)."""
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict) or "managedFields" not in metadata:
        return obj
    return {**obj, "metadata": {k: v for k, v in metadata.items() if k != "managedFields"}}


def record_update(
    old: dict[str, Any] | None,
    new: dict[str, Any],
    *,
    manager: str,
    operation: str,
    now: str,
    schema: SchemaNode | None,
    subresource: str = "",
) -> dict[str, Any]:
    """`new` with managedFields updated for a create, update or patch written by `manager`.

    `subresource` ("status", "scale") keeps writes through a subresource a separate entry, so
    conflicts read `conflict with "kubectl" with subresource "scale" using apps/v1`.
    """
    entries = _starting_entries(old, new)
    change = compare(without_managed_fields(old or {}), without_managed_fields(new), schema)
    version = str(new.get("apiVersion") or "")
    own = ManagerEntry(manager, operation, version, now, frozenset(), subresource)
    previous = next((e for e in entries if e.identity == own.identity), None)
    others = [
        replace(entry, fields=entry.fields - change.touched - change.removed)
        for entry in entries
        if entry.identity != own.identity
    ]
    fields = ((previous.fields if previous else frozenset()) - change.removed) | change.touched
    time = now if previous is None or change else previous.time
    return with_managers(new, [*others, replace(own, fields=frozenset(fields), time=time)])


def _starting_entries(old: dict[str, Any] | None, new: dict[str, Any]) -> list[ManagerEntry]:
    """The live entries, unless the writer sent managedFields of its own to replace them."""
    sent = (new.get("metadata") or {}).get("managedFields")
    live = ((old or {}).get("metadata") or {}).get("managedFields")
    if sent and not json_equal(sent, live):
        return read_managers(new)
    return read_managers(old)
