"""RFC 6902 JSON patch (`application/json-patch+json`), applied with the `jsonpatch` package.

kube-apiserver sorts JSON patch failures in two: a document that is not a list of well-formed
operations is a syntax mistake (400 BadRequest), while an operation that cannot apply to this
object (a failed `test`, a path that is missing) is 422 Invalid. Kubernetes itself hides the
reason behind "the server rejected our request due to an error in our request"; here the
message names the operation, its position and its path, so a client knows which step to fix.

Operations are applied one at a time so a failure can be pinned to its operation. `test` is
checked here rather than by the package, because the package compares with Python's `==`,
for which `true` equals `1`. `copy` is turned into the `add` of a copy made through JSON, so
its size is counted before the copy exists and a deep value cannot overflow `copy.deepcopy`.

Like kube-apiserver, the sandbox takes at most 10,000 operations (413 beyond) and stops a patch
with 413 as soon as it would grow the object past 3 MiB or copy more than 3 MiB in all
(growth.py): otherwise a 2 KB patch that copies the annotations into themselves 22 times builds
gigabytes. The result may nest no deeper than a request body may (`sandbox.limits`), because
`move` can stack values that were each shallow enough.

This module knows nothing of schemas, kinds, storage or HTTP.
"""

from __future__ import annotations

from typing import Any

import jsonpatch
import jsonpointer
import orjson

from sandbox.errors import BadRequest, Cause, Invalid, RequestEntityTooLarge
from sandbox.jsoncopy import deep_copy
from sandbox.limits import MAX_DEPTH, MAX_JSON_PATCH_OPERATIONS, depth_message, too_deep
from sandbox.patches.growth import Growth, encoded_size
from sandbox.patches.merge import json_equal, json_type

OPERATIONS = ("add", "remove", "replace", "move", "copy", "test")
NEEDS_VALUE = frozenset({"add", "replace", "test"})
NEEDS_FROM = frozenset({"move", "copy"})
_MISSING = object()
# metadata / managedFields / [i] / fieldsV1 / ... / {} for a leaf: 5 levels below the field.
MANAGED_FIELDS_DEPTH = 5


def apply_json_patch(target: dict[str, Any], operations: Any) -> dict[str, Any]:
    """Apply a JSON patch document to an object; neither argument is modified."""
    # Copied so the result never shares a `value` with the request body.
    checked = deep_copy(_validated(operations))
    document: Any = deep_copy(target)
    growth = Growth(document)
    for index, operation in enumerate(checked):
        document = _apply_one(document, operation, index, growth)
    if not isinstance(document, dict):
        raise Invalid(
            f"the JSON patch turned the object into {json_type(document)}; "
            "an API object must stay a JSON object",
            causes=[Cause(field="", message="must be a JSON object")],
        )
    if _too_deep(document):
        message = depth_message("the patched object")
        raise Invalid(message, causes=[Cause(field="", message=message)])
    return document


def _too_deep(document: dict[str, Any]) -> bool:
    """Whether the patched object nests past what a request body may. Its managedFields mirror
    its fields `MANAGED_FIELDS_DEPTH` levels further down, so they are held to that much more."""
    meta = document.get("metadata")
    if not isinstance(meta, dict) or "managedFields" not in meta:
        return too_deep(document)
    fields = {k: v for k, v in meta.items() if k != "managedFields"}
    managed = {"metadata": {"managedFields": meta["managedFields"]}}
    return too_deep({**document, "metadata": fields}) or too_deep(
        managed, MAX_DEPTH + MANAGED_FIELDS_DEPTH
    )


def _validated(operations: Any) -> list[dict[str, Any]]:
    if not isinstance(operations, list):
        raise BadRequest(
            f"a JSON patch must be a JSON array of operations, not {json_type(operations)}"
        )
    if len(operations) > MAX_JSON_PATCH_OPERATIONS:
        raise RequestEntityTooLarge(
            f"The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, "
            f"got {len(operations)}"
        )
    for index, operation in enumerate(operations):
        problem = _malformed(operation)
        if problem:
            raise BadRequest(f"JSON patch operation {index} is malformed: {problem}")
    return operations


def _malformed(operation: Any) -> str | None:
    if not isinstance(operation, dict):
        return f"expected an object, got {json_type(operation)}"
    name = operation.get("op")
    if name not in OPERATIONS:
        return f'"op" must be one of {", ".join(OPERATIONS)}, got {name!r}'
    for field in ("path", "from") if name in NEEDS_FROM else ("path",):
        pointer = operation.get(field)
        if not isinstance(pointer, str):
            return f'"{field}" is required and must be a string'
        if pointer and not pointer.startswith("/"):
            return f'"{field}" must be a JSON pointer starting with "/", got {pointer!r}'
    if name in NEEDS_VALUE and "value" not in operation:
        return f'"{name}" needs a "value"'
    return None


def _apply_one(document: Any, operation: dict[str, Any], index: int, growth: Growth) -> Any:
    name, path = operation["op"], operation["path"]
    if name == "test":
        _test(document, operation, index)
        return document
    step = _sized(document, operation, index, growth)
    try:
        return jsonpatch.JsonPatch([step]).apply(document, in_place=True)
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as error:
        raise _failed(name, index, path, _explain(document, operation, error)) from error


def _test(document: Any, operation: dict[str, Any], index: int) -> None:
    path = operation["path"]
    actual = _resolve(document, path)
    if actual is _MISSING:
        raise _failed("test", index, path, f'doc is missing path "{path}"')
    # Recursion stays shallow: the comparison stops where the (checked) value ends.
    if not json_equal(actual, operation["value"]):
        shown, wanted = _shown(actual), _shown(operation["value"])
        raise _failed("test", index, path, f'value at "{path}" is {shown}, not {wanted}')


def _sized(document: Any, operation: dict[str, Any], index: int, growth: Growth) -> dict[str, Any]:
    """Count what the operation adds to and removes from the object; a copy becomes the add of
    a fresh copy made through JSON, measured before it exists."""
    name, path = operation["op"], operation["path"]
    if name == "copy":
        value = _resolve(document, operation["from"])
        if value is _MISSING:
            return operation  # the package reports the missing "from"
        try:
            encoded = orjson.dumps(value)
        except orjson.JSONEncodeError:
            message = depth_message(f'the value at "{operation["from"]}"')
            raise _failed(name, index, path, message) from None
        growth.copy(len(encoded), index=index)
        return {"op": "add", "path": path, "value": orjson.loads(encoded)}
    if name in ("remove", "replace") or (name == "add" and _replaces_member(document, path)):
        removed = _resolve(document, path)
        if removed is not _MISSING:
            growth.shrink(removed)
    if name in ("add", "replace"):
        growth.grow(encoded_size(operation["value"]) or 0, index=index, name=name)
    return operation


def _replaces_member(document: Any, path: str) -> bool:
    """Whether an add at `path` overwrites an object's member (into a list it inserts)."""
    parent = _resolve(document, path.rsplit("/", 1)[0])
    return isinstance(parent, dict)


def _shown(value: Any) -> str:
    try:
        text = orjson.dumps(value).decode()
    except orjson.JSONEncodeError:
        return "(a value nested too deeply to show)"
    return text if len(text) <= 200 else text[:200] + "..."


def _explain(document: Any, operation: dict[str, Any], error: Exception) -> str:
    name, path = operation["op"], operation["path"]
    source = operation.get("from")
    if isinstance(source, str) and _resolve(document, source) is _MISSING:
        return f'doc is missing "from" path "{source}"'
    if name in ("remove", "replace"):
        if _resolve(document, path) is _MISSING:
            return f'doc is missing path "{path}"'
        return str(error)
    parent_path = path.rsplit("/", 1)[0]
    parent = _resolve(document, parent_path)
    if parent is _MISSING:
        return f'doc is missing path "{parent_path}", the parent of "{path}"'
    if isinstance(parent, list):
        return f'"{path}" is not a valid index into a list of {len(parent)} items'
    if not isinstance(parent, dict):
        return f'"{parent_path}" is {json_type(parent)}, not an object or a list'
    return str(error)


def _resolve(document: Any, path: str) -> Any:
    try:
        return jsonpointer.resolve_pointer(document, path)
    except jsonpointer.JsonPointerException:
        return _MISSING


def _failed(name: str, index: int, path: str, detail: str) -> Invalid:
    # kubectl prints the causes rather than the message, so each carries the whole story.
    message = f"{name} operation {index} does not apply: {detail}"
    return Invalid(message, causes=[Cause(field=path, message=message)])
