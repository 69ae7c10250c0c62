"""What a write would change: field paths with old and new values, Secret values redacted.

The object before and the object the API server says it would become (a server-side dry run)
are compared leaf by leaf; metadata the server rewrites on every write is left out, and a Secret
value that changed but kept its length (which redaction would hide) is still reported as changed.
Redaction hides a Secret's values where they stand; a write can move one elsewhere in the object
(a JSON patch copying `/data/password` into an annotation), so the diff of a Secret is also
scrubbed of every value either side holds.
"""

from __future__ import annotations

import json
from typing import Any

from core.connection import Json
from mcp_servers.common.secret_values import SecretValues
from mcp_servers.kube.redaction import marker, redact

# Fields the API server rewrites on every write: noise in a diff.
_NOISE = {
    ("metadata", "resourceVersion"),
    ("metadata", "managedFields"),
    ("metadata", "generation"),
    ("metadata", "uid"),
    ("metadata", "creationTimestamp"),
}


def changes(before: Json | None, after: Json, *, kind: str) -> list[Json]:
    found = diff(
        without_noise(redact(before or {}, kind=kind)), without_noise(redact(after, kind=kind))
    )
    if kind != "Secret":
        return found
    if before is not None:
        found += _secret_changes(before, after, found)
    return SecretValues.of(before, after, kind="Secret").scrub(found)


def diff(old: Any, new: Any, path: str = "") -> list[Json]:
    """The leaf paths where `old` and `new` differ, with both values (None: absent)."""
    if isinstance(new, dict) and old is None:
        old = {}  # a new mapping: list its leaves, not one blob
    if isinstance(old, dict) and new is None:
        new = {}
    if isinstance(old, dict) and isinstance(new, dict):
        found: list[Json] = []
        for key in list(old) + [k for k in new if k not in old]:
            child = f"{path}.{key}" if path else str(key)
            if "." in str(key) or "/" in str(key):
                child = f"{path}[{json.dumps(key)}]"
            found += diff(old.get(key), new.get(key), child)
        return found
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [
            c
            for i, (o, n) in enumerate(zip(old, new, strict=True))
            for c in diff(o, n, f"{path}[{i}]")
        ]
    if old == new:
        return []
    return [{"path": path or ".", "old": old, "new": new}]


def without_noise(obj: Json) -> Json:
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict):
        return obj
    kept = {k: v for k, v in metadata.items() if ("metadata", k) not in _NOISE}
    return {**obj, "metadata": kept}


def _secret_changes(before: Json, after: Json, seen: list[Json]) -> list[Json]:
    """Values that changed but kept their length: the redacted diff cannot see them."""
    paths = {c["path"] for c in seen}
    old, new = before.get("data") or {}, after.get("data") or {}
    return [
        {"path": f"data.{k}", "old": marker(old[k]), "new": f"{marker(new[k])}, changed"}
        for k in new
        if k in old and old[k] != new[k] and f"data.{k}" not in paths
    ]
