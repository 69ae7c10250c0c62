"""Strategic merge patch (`application/strategic-merge-patch+json`), as kube-apiserver applies it.

It is a JSON merge patch that reads the object's schema. A list whose field carries
`x-kubernetes-patch-strategy: merge` is merged instead of replaced: objects by their
`x-kubernetes-patch-merge-key` (containers by `name`), primitives as a set (finalizers). A map
field with strategy `replace` is replaced. The patch may also carry directives:

    "$patch": "replace" | "delete"          in an object: take it as given / empty it
    {"$patch": "delete", <key>: value}      in a merging list: drop the items with that key
    {"$patch": "replace"}                   in a merging list: the list is the other items
    "$setElementOrder/<list>": [...]         the final relative order of those items
    "$retainKeys": [...]                     clear every key of this object not listed
    "$deleteFromPrimitiveList/<list>": [...] values to drop from a merging primitive list

Order of a merged list follows the Go implementation: items named in the patch take the
patch's order, items only in the live list keep theirs, and the two are interleaved by live
position. A new item therefore lands *before* the live items it is compared with (`kubectl
patch` adding a container puts it first); clients that care send `$setElementOrder`, as
`kubectl apply` and `kubectl set image` do.

One deliberate difference: Go stores a value that is new to the object verbatim, directives
and nulls included, and relies on decoding into typed structs to drop them. Here a new value
is merged onto an empty one, which processes its directives and drops its nulls, so the
stored dict is what kube-apiserver would end up storing.

This module knows schemas only through `SchemaNode`; it knows nothing of storage or HTTP.
"""

from __future__ import annotations

import json
from typing import Any

from sandbox.errors import BadRequest
from sandbox.jsoncopy import deep_copy
from sandbox.patches.merge import apply_merge_patch, json_equal, json_type
from sandbox.schemas import SchemaNode

DIRECTIVE = "$patch"
RETAIN_KEYS = "$retainKeys"
SET_ORDER = "$setElementOrder/"
DELETE_FROM = "$deleteFromPrimitiveList/"


def apply_strategic_merge_patch(
    target: dict[str, Any], patch: Any, schema: SchemaNode | None
) -> dict[str, Any]:
    """Apply a strategic merge patch (a JSON merge patch when there is no schema)."""
    if schema is None:
        return apply_merge_patch(target, patch)
    if not isinstance(patch, dict):
        raise BadRequest(f"a strategic merge patch must be a JSON object, not {json_type(patch)}")
    return _merge_map(deep_copy(target), deep_copy(patch), schema)


# Everything below works on private deep copies and may modify its arguments in place.


def _merge_map(
    original: dict[str, Any], patch: dict[str, Any], schema: SchemaNode | None
) -> dict[str, Any]:
    if DIRECTIVE in patch:
        return _map_directive(patch, schema)
    _retain_keys(original, patch)
    _apply_element_orders(original, patch, schema)
    deletions: dict[str, Any] = {}
    for key, value in patch.items():
        if key.startswith(DELETE_FROM):
            deletions[key[len(DELETE_FROM) :]] = value
        elif value is None:
            original.pop(key, None)
        else:
            original[key] = _merge_value(original.get(key), value, _child(schema, key))
    # Removals go last so that a list merged by this same patch loses them too.
    for field, values in deletions.items():
        _delete_from_primitive_list(original, field, values)
    return original


def _map_directive(patch: dict[str, Any], schema: SchemaNode | None) -> dict[str, Any]:
    directive = patch[DIRECTIVE]
    if directive == "delete":
        return {}
    if directive == "replace":
        rest = {key: value for key, value in patch.items() if key != DIRECTIVE}
        return _merge_map({}, rest, schema)
    raise BadRequest(
        f"unknown patch type: {directive!r} in map: {_show(patch)}; "
        'in an object "$patch" must be "replace" or "delete"'
    )


def _merge_value(current: Any, value: Any, schema: SchemaNode | None) -> Any:
    if isinstance(value, dict):
        if isinstance(current, dict) and "replace" not in _strategies(schema):
            return _merge_map(current, value, schema)
        return _merge_map({}, value, schema)
    if isinstance(value, list):
        return _merge_list(current if isinstance(current, list) else [], value, schema)
    return value


def _merge_list(original: list[Any], patch: list[Any], schema: SchemaNode | None) -> list[Any]:
    items = schema.items() if schema is not None else None
    if "merge" not in _strategies(schema):
        return [_merge_value(None, item, items) for item in patch]
    if not original and not patch:
        return original
    if _element_kind(original, patch) != "object":
        merged = _unique(original + patch)
        return _ordered(merged, patch, original, None)
    key = schema.patch_merge_key if schema is not None else None
    if not key:
        raise BadRequest("cannot merge lists of objects without a patch merge key")
    original, patch = _special_items(original, patch, key, items)
    merged = _merge_by_key(original, patch, key, items)
    return _ordered(merged, patch, original, key)


def _element_kind(*lists: list[Any]) -> str:
    kinds = {
        "object" if isinstance(item, dict) else json_type(item) for part in lists for item in part
    }
    if "array" in kinds:
        raise BadRequest("lists of lists are not supported by strategic merge patch")
    if "object" in kinds and len(kinds) > 1:
        raise BadRequest(f"list element types are not identical: {sorted(kinds)}")
    return "object" if "object" in kinds else "primitive"


def _special_items(
    original: list[Any], patch: list[Any], key: str, items: SchemaNode | None
) -> tuple[list[Any], list[Any]]:
    """Apply the `$patch` items of a merging list; return (original, the plain patch items)."""
    plain: list[Any] = []
    replace = False
    for item in patch:
        if DIRECTIVE not in item:
            plain.append(item)
            continue
        directive = item[DIRECTIVE]
        if directive == "delete":
            if key not in item:
                raise BadRequest(_no_merge_key(item, key))
            original = [live for live in original if not _same(live, item, key)]
        elif directive == "replace":
            replace = True
        elif directive == "merge":
            raise BadRequest("merging lists cannot yet be specified in the patch")
        else:
            raise BadRequest(
                f"unknown patch type: {directive!r} in map: {_show(item)}; "
                'in a list item "$patch" must be "delete" or "replace"'
            )
    if replace:
        return [_merge_map({}, item, items) for item in plain], []
    return original, plain


def _merge_by_key(
    original: list[Any], patch: list[Any], key: str, items: SchemaNode | None
) -> list[Any]:
    merged = list(original)
    for item in patch:
        if key not in item:
            raise BadRequest(_no_merge_key(item, key))
        position = _index(merged, item, key)
        if position is None:
            merged.append(_merge_map({}, item, items))
        else:
            merged[position] = _merge_map(merged[position], item, items)
    return merged


def _ordered(merged: list[Any], order: list[Any], live: list[Any], key: str | None) -> list[Any]:
    """Items named in `order` in that order, the others in `live` order, interleaved by `live`."""
    named = [item for item in merged if _index(order, item, key) is not None]
    others = [item for item in merged if _index(order, item, key) is None]
    named.sort(key=lambda item: _index(order, item, key) or 0)
    others.sort(key=lambda item: _position(live, item, key))
    result: list[Any] = []
    while named or others:
        if not named or (others and _before(others[0], named[0], live, key)):
            result.append(others.pop(0))
        else:
            result.append(named.pop(0))
    return result


def _before(left: Any, right: Any, live: list[Any], key: str | None) -> bool:
    """True only when both items are live and `left` comes first; new items win ties."""
    left_at, right_at = _index(live, left, key), _index(live, right, key)
    return left_at is not None and right_at is not None and left_at < right_at


def _apply_element_orders(
    original: dict[str, Any], patch: dict[str, Any], schema: SchemaNode | None
) -> None:
    for directive in [key for key in patch if key.startswith(SET_ORDER)]:
        order = patch.pop(directive)
        field = directive[len(SET_ORDER) :]
        if not isinstance(order, list):
            raise BadRequest(f'invalid patch format of setElementOrder list: "{directive}"')
        child = _child(schema, field)
        live = _list_at(original, field, "live object")
        changes = _list_at(patch, field, "patch")
        key = child.patch_merge_key if child is not None and _has_objects(live, changes) else None
        _check_order(changes or [], order, key)
        if changes is not None:
            merged = _merge_list(live or [], patch.pop(field), child)
        elif live is not None:
            merged = live
        else:
            continue
        original[field] = _ordered(merged, order, live or [], key)


def _check_order(changes: list[Any], order: list[Any], key: str | None) -> None:
    """Every plain item of the patch list must appear in `order`, in the same relative order."""
    position = 0
    for item in changes:
        if isinstance(item, dict) and DIRECTIVE in item:
            continue
        while position < len(order) and not _same(order[position], item, key):
            position += 1
        if position == len(order):
            raise BadRequest(
                f"the order in patch list {_show(changes)} doesn't match "
                f"$setElementOrder list {_show(order)}"
            )
        position += 1


def _retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
    if RETAIN_KEYS not in patch:
        return
    keep = patch.pop(RETAIN_KEYS)
    if not isinstance(keep, list) or not all(isinstance(key, str) for key in keep):
        raise BadRequest("invalid patch format of retainKeys: expected a list of field names")
    for key, value in patch.items():
        if value is None or key.startswith((SET_ORDER, DELETE_FROM)):
            continue
        if key not in keep:
            raise BadRequest(
                f'invalid patch format of retainKeys: "{key}" is set by the patch '
                "but missing from $retainKeys"
            )
    for key in [key for key in original if key not in keep]:
        del original[key]


def _delete_from_primitive_list(original: dict[str, Any], field: str, values: Any) -> None:
    if not isinstance(values, list):
        raise BadRequest(f'invalid patch format of primitive list: "{DELETE_FROM}{field}"')
    current = original.get(field)
    if current is None:
        return
    if not isinstance(current, list):
        raise BadRequest(f'"{DELETE_FROM}{field}" names a field that is not a list')
    original[field] = [item for item in current if not any(json_equal(item, v) for v in values)]


def _list_at(container: dict[str, Any], field: str, where: str) -> list[Any] | None:
    if field not in container:
        return None
    value = container[field]
    if not isinstance(value, list):
        raise BadRequest(
            f'$setElementOrder/{field} needs a list, but "{field}" in the {where} '
            f"is {json_type(value)}"
        )
    return value


def _has_objects(*lists: list[Any] | None) -> bool:
    return any(isinstance(item, dict) for part in lists if part for item in part)


def _index(items: list[Any], item: Any, key: str | None) -> int | None:
    for position, candidate in enumerate(items):
        if _same(candidate, item, key):
            return position
    return None


def _position(items: list[Any], item: Any, key: str | None) -> int:
    found = _index(items, item, key)
    return len(items) if found is None else found


def _same(left: Any, right: Any, key: str | None) -> bool:
    if key is None:
        return json_equal(left, right)
    return (
        isinstance(left, dict)
        and isinstance(right, dict)
        and key in left
        and key in right
        and json_equal(left[key], right[key])
    )


def _unique(items: list[Any]) -> list[Any]:
    result: list[Any] = []
    for item in items:
        if not any(json_equal(item, seen) for seen in result):
            result.append(item)
    return result


def _strategies(schema: SchemaNode | None) -> set[str]:
    return set(schema.patch_strategy.split(",")) if schema is not None else set()


def _child(schema: SchemaNode | None, key: str) -> SchemaNode | None:
    return schema.prop(key) if schema is not None else None


def _no_merge_key(item: Any, key: str) -> str:
    return f"map: {_show(item)} does not contain declared merge key: {key}"


def _show(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)
