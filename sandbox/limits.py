"""How much one request may ask of the sandbox: kube-apiserver's bounds, and one of our own.

    MAX_BODY                    3 MiB   request bodies, and what a JSON patch may grow an object to
    MAX_JSON_PATCH_OPERATIONS   10,000  operations in one JSON patch
    MAX_JSON_PATCH_COPY         3 MiB   bytes all `copy` operations of one JSON patch may add
    MAX_DEPTH                   200     how deeply a JSON document may nest (below)

kube-apiserver refuses JSON nested deeper than 10,000 levels. The sandbox walks objects
recursively (merges, managed fields, copies) and serializes them with orjson, which stops at
255 levels; an object also travels wrapped (a List item, a watch event, a Table row) and carries
managedFields that mirror its shape a few levels down. So the sandbox refuses at `MAX_DEPTH`,
checked without recursion before anything recursive reads a document. Real manifests, CRD
schemas included, nest a few dozen levels at most.

A leaf: it knows JSON values and Status errors, nothing of HTTP, kinds or storage.
"""

from __future__ import annotations

from typing import Any

from sandbox.errors import BadRequest

MAX_BODY = 3 * 1024 * 1024
MAX_JSON_PATCH_OPERATIONS = 10_000
MAX_JSON_PATCH_COPY = MAX_BODY
MAX_DEPTH = 200


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether `value` nests objects and arrays more than `limit` levels deep (a scalar is 0
    levels, `{}` one). Iterative, and it stops at the first path past the limit."""
    if not isinstance(value, dict | list):
        return limit < 0
    if limit < 1:
        return True
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        for child in node.values() if isinstance(node, dict) else node:
            if isinstance(child, dict | list):
                if depth >= limit:
                    return True
                stack.append((child, depth + 1))
    return False


def check_depth(value: Any, *, what: str = "the request body") -> None:
    """Refuse a document nested past `MAX_DEPTH` as kube-apiserver refuses one past 10,000."""
    if isinstance(value, dict | list) and too_deep(value):
        raise BadRequest(depth_message(what))


def depth_message(what: str) -> str:
    return (
        f"{what} nests objects and arrays more than {MAX_DEPTH} levels deep "
        "(exceeded max depth); flatten it, or send the deep part as a string"
    )
