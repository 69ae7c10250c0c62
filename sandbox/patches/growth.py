"""How far one JSON patch may grow an object, counted while it applies, as kube-apiserver bounds it.

A `copy` duplicates a subtree, so a 2 KB patch that copies an object's annotations into
themselves doubles the object with every operation: 22 operations make gigabytes. kube-apiserver
refuses such patches, and so does the sandbox, with 413 RequestEntityTooLarge:

- when the `copy` operations of one patch would add more than `MAX_JSON_PATCH_COPY` bytes in
  all (json-patch's accumulated copy size limit, which kube-apiserver sets to 3 MiB), and
- as soon as the object would pass `MAX_BODY` bytes ("Request entity too large: limit is
  3145728"), before the bigger object is built.

Sizes are those of the compact JSON encoding. Only values entering or leaving the object are
measured (a `move` carries its value for free), so every byte is measured at most twice and the
accounting never costs more than the patch itself.
"""

from __future__ import annotations

from typing import Any

import orjson

from sandbox.errors import RequestEntityTooLarge
from sandbox.limits import MAX_BODY, MAX_JSON_PATCH_COPY

TOO_LARGE = f"Request entity too large: limit is {MAX_BODY}"


def encoded_size(value: Any) -> int | None:
    """The length of `value` as compact JSON; None when it cannot be encoded (nested too deep)."""
    try:
        return len(orjson.dumps(value))
    except orjson.JSONEncodeError:
        return None


class Growth:
    """The running size of one object under one JSON patch, and the bytes its copies added."""

    def __init__(self, document: Any) -> None:
        self.size = encoded_size(document) or 0
        self.copied = 0

    def copy(self, size: int, *, index: int) -> None:
        self.copied += size
        if self.copied > MAX_JSON_PATCH_COPY:
            raise RequestEntityTooLarge(
                f"{TOO_LARGE}: the copy operations of this JSON patch would copy "
                f"{self.copied} bytes in all, up to operation {index}; copy less, or send "
                "the values themselves"
            )
        self.grow(size, index=index, name="copy")

    def grow(self, size: int, *, index: int, name: str) -> None:
        self.size += size
        if size > 0 and self.size > MAX_BODY:
            raise RequestEntityTooLarge(
                f"{TOO_LARGE}: {name} operation {index} of the JSON patch would grow the "
                f"object to {self.size} bytes or more"
            )

    def shrink(self, removed: Any) -> None:
        # A value too deep to encode is not subtracted: the running size stays an upper bound.
        self.size -= encoded_size(removed) or 0
