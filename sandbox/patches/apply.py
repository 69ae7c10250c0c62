"""Server-side apply (`application/apply-patch+yaml`): one manager declares the fields it wants.

An apply of configuration C by manager M onto the live object:

1. merges C into the live object by server-side-apply types: keyed lists by key, set lists as
   sets, atomic lists and maps replaced; new list items go after the live ones;
2. removes the fields M applied last time and leaves out now, unless another manager owns
   them too;
3. fails with 409 Conflict, one cause per field, when a field whose value changes is owned by
   another manager, unless `force`, in which case M takes the field over;
4. records M's Apply entry as exactly the fields of C; managers whose fields were changed or
   removed lose them.

An object with no managedFields yet is first attributed to the manager "before-first-apply",
as Kubernetes does, so the first applier cannot remove fields it never set.

This module knows nothing of storage, HTTP or admission: the caller decides whether the result
is a create or an update, and assigns uid, resourceVersion and the like.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from sandbox.errors import BadRequest, Cause, Conflict
from sandbox.jsoncopy import deep_copy
from sandbox.patches.managed import (
    KEY_DEFAULTS,
    MISSING,
    Comparison,
    FieldSet,
    ManagerEntry,
    Path,
    applied_fields,
    child_schema,
    compare,
    granular_kind,
    item_schema,
    keyed_items,
    path_string,
    read_managers,
    tracked,
    with_managers,
    without_managed_fields,
)
from sandbox.patches.merge import json_equal, json_type
from sandbox.schemas import SchemaNode

BEFORE_FIRST_APPLY = "before-first-apply"


def server_side_apply(
    live: dict[str, Any] | None,
    applied: dict[str, Any],
    *,
    manager: str,
    force: bool,
    schema: SchemaNode | None,
    now: str,
) -> dict[str, Any]:
    """The object after `manager` applies `applied` to `live` (None: the object is new)."""
    _check_config(applied)
    base = without_managed_fields(live) if live is not None else {}
    entries = _current_entries(live, base, schema, now)
    own = ManagerEntry(manager, "Apply", "", now, frozenset())
    previous = next((entry for entry in entries if entry.identity == own.identity), None)
    others = [entry for entry in entries if entry.identity != own.identity]
    claimed = applied_fields(applied, schema)
    merged = _merge(deep_copy(base), applied, schema)
    if previous is not None:
        keep = claimed.union(*(entry.fields for entry in others))
        _prune(merged, previous.fields - claimed, keep)
    change = compare(base, merged, schema)
    others = _settle(others, change, force=force)
    unchanged = previous is not None and not change and previous.fields == claimed
    mine = replace(
        own,
        api_version=str(applied.get("apiVersion") or base.get("apiVersion") or ""),
        time=previous.time if previous is not None and unchanged else now,
        fields=claimed,
    )
    return with_managers(merged, [*others, mine])


def _check_config(applied: Any) -> None:
    if not isinstance(applied, dict):
        raise BadRequest(
            f"an apply configuration must be a JSON or YAML object, not {json_type(applied)}"
        )
    metadata = applied.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise BadRequest(f"metadata must be an object, not {json_type(metadata)}")
    if metadata and metadata.get("managedFields"):
        raise BadRequest("metadata.managedFields must be nil: remove it from the configuration")


def _current_entries(
    live: dict[str, Any] | None, base: dict[str, Any], schema: SchemaNode | None, now: str
) -> list[ManagerEntry]:
    if live is None:
        return []
    entries = read_managers(live)
    if entries:
        return entries
    existing = compare({}, base, schema).added
    if not existing:
        return []
    version = str(base.get("apiVersion") or "")
    return [ManagerEntry(BEFORE_FIRST_APPLY, "Update", version, now, frozenset(existing))]


# --- merging -------------------------------------------------------------------------------


def _merge(live: Any, config: Any, schema: SchemaNode | None) -> Any:
    """`config` merged onto `live`; `live` must be a private copy (it is reused, not copied)."""
    kind = granular_kind(config, schema)
    if kind == "map":
        result = dict(live) if isinstance(live, dict) else {}
        for key, value in config.items():
            if value is None:
                # Applying null claims the field and leaves it unset, as in Kubernetes.
                result.pop(key, None)
            else:
                result[key] = _merge(result.get(key, MISSING), value, child_schema(schema, key))
        return result
    if kind == "list":
        return _merge_items(live if isinstance(live, list) else [], config, schema)
    return deep_copy(config)


def _merge_items(live: list[Any], config: list[Any], schema: SchemaNode | None) -> list[Any]:
    """Merge a keyed or set list: live-only items stay put, configured items follow the config.

    Configured items are emitted in the configuration's order; each time the walk over the live
    list reaches the next item the two lists share, the configured items up to it are emitted
    there. New items therefore land after the live items that precede the next shared one.
    """
    items = item_schema(schema)
    live_by = keyed_items(live, schema)
    config_by = keyed_items(config, schema)
    pending = list(config_by)
    shared = [key for key in pending if key in live_by]
    result: list[Any] = []
    for key, item in live_by.items():
        if key not in config_by:
            result.append(item)
        elif shared and shared[0] == key:
            shared.pop(0)
            upto = pending.index(key) + 1
            flushed, pending = pending[:upto], pending[upto:]
            result.extend(_merge(live_by.get(k, MISSING), config_by[k], items) for k in flushed)
    result.extend(_merge(live_by.get(k, MISSING), config_by[k], items) for k in pending)
    return result


# --- pruning -------------------------------------------------------------------------------


def _prune(obj: dict[str, Any], dropped: FieldSet, keep: FieldSet) -> None:
    """Remove the dropped fields (with what they hold) unless a kept field lies at or below."""
    kept = {path[:depth] for path in keep for depth in range(1, len(path) + 1)}
    candidates = {path[:depth] for path in dropped for depth in range(1, len(path) + 1)}
    for path in sorted(candidates, key=len):
        if path not in kept and tracked(path):
            _remove(obj, path)


def _remove(node: Any, path: Path) -> None:
    for element in path[:-1]:
        node = _step(node, element)
        if node is MISSING:
            return
    last = path[-1]
    if last.startswith("f:"):
        if isinstance(node, dict):
            node.pop(last[2:], None)
    elif isinstance(node, list):
        node[:] = [item for index, item in enumerate(node) if not _is_item(item, index, last)]


def _step(node: Any, element: str) -> Any:
    if element.startswith("f:"):
        return node.get(element[2:], MISSING) if isinstance(node, dict) else MISSING
    if isinstance(node, list):
        for index, item in enumerate(node):
            if _is_item(item, index, element):
                return item
    return MISSING


def _is_item(item: Any, index: int, element: str) -> bool:
    kind, body = element[:2], element[2:]
    if kind == "i:":
        return str(index) == body
    if kind == "v:":
        return json_equal(item, json.loads(body))
    if kind == "k:" and isinstance(item, dict):
        defaults = dict(KEY_DEFAULTS)
        wanted: dict[str, Any] = json.loads(body)
        return all(json_equal(item.get(k, defaults.get(k)), v) for k, v in wanted.items())
    return False


# --- ownership -----------------------------------------------------------------------------


def _settle(others: list[ManagerEntry], change: Comparison, *, force: bool) -> list[ManagerEntry]:
    """Other managers after the apply: conflicts raised (or, forced, taken), removals dropped."""
    touched = change.touched
    conflicts = [
        (entry, path)
        for entry in sorted(others, key=lambda e: e.identity)
        for path in sorted(entry.fields & touched, key=path_string)
    ]
    if conflicts and not force:
        raise _conflict_error(conflicts)
    return [replace(entry, fields=entry.fields - touched - change.removed) for entry in others]


def _conflict_error(conflicts: list[tuple[ManagerEntry, Path]]) -> Conflict:
    causes = [
        Cause(
            field=path_string(path),
            message=f"conflict with {entry.describe()}",
            reason="FieldManagerConflict",
        )
        for entry, path in conflicts
    ]
    if len(causes) == 1:
        only = causes[0]
        return Conflict(
            f"Apply failed with 1 conflict: {only.message}: {only.field}", causes=causes
        )
    lines: list[str] = []
    for entry in dict.fromkeys(entry for entry, _ in conflicts):
        lines.append(f"conflicts with {entry.describe()}:")
        lines.extend(f"- {path_string(path)}" for owner, path in conflicts if owner is entry)
    message = f"Apply failed with {len(causes)} conflicts: " + "\n".join(lines)
    return Conflict(message, causes=causes)
