"""RFC 6902 JSON patch (`application/json-patch+json`), applied with the `jsonpatch` package.

kube-apiserver sorts JSON patch failures in two: a document that is not a list of well-formed
operations is a syntax mistake (400 BadRequest), while an operation that cannot apply to this
object (a failed `test`, a path that is missing) is 422 Invalid. Kubernetes itself hides the
reason behind "the server rejected our request due to an error in our request"; here the
message names the operation, its position and its path, so a client knows which step to fix.

Operations are applied one at a time so a failure can be pinned to its operation. `test` is
checked here rather than by the package, because the package compares with Python's `==`,
for which `true` equals `1`.

This module knows nothing of schemas, kinds, storage or HTTP.
"""

from __future__ import annotations

import json
from typing import Any

import jsonpatch
import jsonpointer

from sandbox.errors import BadRequest, Cause, Invalid
from sandbox.jsoncopy import deep_copy
from sandbox.patches.merge import json_equal, json_type

OPERATIONS = ("add", "remove", "replace", "move", "copy", "test")
NEEDS_VALUE = frozenset({"add", "replace", "test"})
NEEDS_FROM = frozenset({"move", "copy"})
_MISSING = object()


def apply_json_patch(target: dict[str, Any], operations: Any) -> dict[str, Any]:
    """Apply a JSON patch document to an object; neither argument is modified."""
    # Copied so the result never shares a `value` with the request body.
    checked = deep_copy(_validated(operations))
    document: Any = deep_copy(target)
    for index, operation in enumerate(checked):
        document = _apply_one(document, operation, index)
    if not isinstance(document, dict):
        raise Invalid(
            f"the JSON patch turned the object into {json_type(document)}; "
            "an API object must stay a JSON object",
            causes=[Cause(field="", message="must be a JSON object")],
        )
    return document


def _validated(operations: Any) -> list[dict[str, Any]]:
    if not isinstance(operations, list):
        raise BadRequest(
            f"a JSON patch must be a JSON array of operations, not {json_type(operations)}"
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


def _apply_one(document: Any, operation: dict[str, Any], index: int) -> Any:
    name, path = operation["op"], operation["path"]
    if name == "test":
        actual = _resolve(document, path)
        if actual is _MISSING:
            raise _failed(name, index, path, f'doc is missing path "{path}"')
        if not json_equal(actual, operation["value"]):
            shown = json.dumps(actual)
            wanted = json.dumps(operation["value"])
            raise _failed(name, index, path, f'value at "{path}" is {shown}, not {wanted}')
        return document
    try:
        return jsonpatch.JsonPatch([operation]).apply(document, in_place=True)
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as error:
        raise _failed(name, index, path, _explain(document, operation, error)) from error


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
