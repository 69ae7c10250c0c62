"""Writes to nodes: cordon / uncordon and taints.

Nodes are cluster-scoped, so `Writes.target` refuses them on a server confined to some
namespaces. A taint change replaces the node's whole taint list, guarded by its resourceVersion,
so a taint someone else added meanwhile is never lost: on a conflict the node is read again and
the change recomputed (three tries).
"""

from __future__ import annotations

import re
from typing import Literal

from core.connection import Json
from core.errors import Conflict, InvalidArgument, NotFound
from mcp_servers.kube.writes import CONTENT_TYPES, MANAGER, Writes, retrying

Effect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]

_TAINT_KEY = re.compile(
    r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)
_TAINT_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$")


def cordon(
    writes: Writes,
    node: str,
    *,
    unschedulable: bool = True,
    dry_run: bool = False,
    context: str | None = None,
) -> Json:
    api = writes.api(context)
    target = writes.target(api, "nodes", node, None)
    # `null` removes the field, as kubectl uncordon leaves a node: no `unschedulable: false`.
    body = {"spec": {"unschedulable": True if unschedulable else None}}
    return writes.merge(target, api, body, dry_run=dry_run)


def taint(
    writes: Writes,
    node: str,
    key: str,
    *,
    value: str = "",
    effect: Effect | None = None,
    remove: bool = False,
    overwrite: bool = False,
    dry_run: bool = False,
    context: str | None = None,
) -> Json:
    check_taint(key, value)
    if effect is None and not remove:
        raise InvalidArgument("give the taint's effect: NoSchedule, PreferNoSchedule or NoExecute")
    api = writes.api(context)
    target = writes.target(api, "nodes", node, None)

    def once() -> Json:
        current = writes.current(api, target)
        if current is None:
            raise NotFound(f"{target.what} was not found")
        taints = _changed(current, node, key, value, effect, remove=remove, overwrite=overwrite)
        body = {"metadata": {"resourceVersion": current["metadata"]["resourceVersion"]},
                "spec": {"taints": taints or None}}  # fmt: skip
        return writes.change(
            api, target, "PATCH", body=body, content_type=CONTENT_TYPES["merge"],
            query={"fieldManager": MANAGER}, dry_run=dry_run, before=current,
        )  # fmt: skip

    return retrying(once)


def _changed(
    current: Json,
    node: str,
    key: str,
    value: str,
    effect: Effect | None,
    *,
    remove: bool,
    overwrite: bool,
) -> list[Json]:
    """The node's taint list with the asked change made."""
    taints: list[Json] = list(current.get("spec", {}).get("taints") or [])
    same = [t for t in taints if t.get("key") == key and effect in (None, t.get("effect"))]
    if remove:
        if not same:
            raise NotFound(f"taint {key!r} not found on node {node}")
        return [t for t in taints if t not in same]
    if same and (same[0].get("value") or "") != value:
        if not overwrite:
            raise Conflict(
                f"node {node} already has taint {key}={same[0].get('value', '')}:{effect}; "
                "call again with overwrite=True to change its value"
            )
        return [t if t not in same else {**t, "value": value} for t in taints]
    if not same:
        taints.append({"key": key, "effect": effect, **({"value": value} if value else {})})
    return taints


def check_taint(key: str, value: str) -> None:
    if len(key) > 316 or not _TAINT_KEY.match(key):
        raise InvalidArgument(f"taint key {key!r} is not a qualified name (prefix/name)")
    if len(value) > 63 or not _TAINT_VALUE.match(value):
        raise InvalidArgument(f"taint value {value!r} is not a valid label value")
