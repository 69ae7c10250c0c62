"""List semantics: selectors, `limit`/`continue` pagination and the List envelope.

Continue tokens are opaque to clients (base64 JSON of the resourceVersion the first page was
served at and the last key returned), so a paginated list resumes after that key. Kubernetes
serves every page from one snapshot; the sandbox serves later pages from the live state and keeps
the first page's resourceVersion, which no client of ours can tell apart.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

import orjson

from sandbox.errors import BadRequest
from sandbox.registry import ResourceType
from sandbox.selectors import FieldSelector, LabelSelector
from sandbox.store import Obj, Store


@dataclass(frozen=True)
class ListQuery:
    namespace: str | None
    labels: LabelSelector | None = None
    fields: FieldSelector | None = None
    limit: int | None = None
    continue_token: str = ""

    @classmethod
    def parse(cls, rt: ResourceType, query: dict[str, str], *, namespace: str | None) -> ListQuery:
        labels = query.get("labelSelector") or ""
        fields = query.get("fieldSelector") or ""
        field_selector = FieldSelector.parse(fields) if fields else None
        if field_selector is not None:
            field_selector.check_supported(rt.kind)
        limit_raw = query.get("limit") or ""
        try:
            limit = int(limit_raw) if limit_raw else None
        except ValueError:
            raise BadRequest(f'invalid value "{limit_raw}" for query parameter "limit"') from None
        return cls(
            namespace=namespace,
            labels=LabelSelector.parse(labels) if labels else None,
            fields=field_selector,
            limit=limit if limit and limit > 0 else None,
            continue_token=query.get("continue") or "",
        )

    def matches(self, obj: Obj) -> bool:
        if self.labels is not None and not self.labels.matches(obj["metadata"].get("labels")):
            return False
        return self.fields is None or self.fields.matches(obj)


def select(store: Store, rt: ResourceType, query: ListQuery) -> tuple[list[Obj], dict[str, Any]]:
    """The matching objects of one page, and the list metadata to send with them."""
    rv, after = _decode_continue(query.continue_token) if query.continue_token else (store.rv, None)
    items = [o for o in store.list(rt.key, query.namespace) if query.matches(o)]
    if after is not None:
        items = [o for o in items if _sort_key(o) > after]
    meta: dict[str, Any] = {"resourceVersion": str(rv)}
    if query.limit is not None and len(items) > query.limit:
        remaining = len(items) - query.limit
        items = items[: query.limit]
        meta["continue"] = _encode_continue(rv, _sort_key(items[-1]))
        meta["remainingItemCount"] = remaining
    return items, meta


def envelope(rt: ResourceType, items: list[Obj], meta: dict[str, Any]) -> dict[str, Any]:
    return {"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": meta, "items": items}


def _sort_key(obj: Obj) -> tuple[str, str]:
    meta = obj["metadata"]
    return (meta.get("namespace", ""), meta["name"])


def _encode_continue(rv: int, last: tuple[str, str]) -> str:
    raw = orjson.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": list(last)})
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_continue(token: str) -> tuple[int, tuple[str, str]]:
    try:
        padded = token + "=" * (-len(token) % 4)
        data = orjson.loads(base64.urlsafe_b64decode(padded))
        namespace, name = data["start"]
        return int(data["rv"]), (str(namespace), str(name))
    except (ValueError, KeyError, TypeError, orjson.JSONDecodeError):
        raise BadRequest(
            "invalid continue token: pass the metadata.continue value of the previous page "
            "unchanged, or start over without one"
        ) from None
