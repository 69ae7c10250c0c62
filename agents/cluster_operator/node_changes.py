"""A node change asked in words, made precise: which node ("nod-2" is node-2 when it is the only
one that close), and which typed change (cordon, uncordon, drain through the PDB-aware plan,
taint and untaint, node labels); or a node pool's size ("add 2 nodes to the workers pool"):
which Cluster API MachineDeployment, and its machine count, relative counts taken from the live
one. What cannot be made precise is the question to ask back, naming the nodes or pools there
are; nothing changes.

Must not know: the grammar's internals, any other agent.
"""

from __future__ import annotations

import difflib
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from agents.cluster_operator.migration import evictions_last_hour
from agents.runtime.changes import ops
from agents.runtime.changes.words import Asked
from agents.runtime.errors import ToolFailed
from agents.runtime.toolbox import Toolbox

OPS = frozenset({"cordon", "uncordon", "drain", "taint", "untaint"})
NO_POOLS = (
    "This cluster has no node pools I can size: none is defined through Cluster API "
    "(MachineDeployments). Nothing changed."
)


def asks(asked: object) -> bool:
    """Whether `asked` is a node's change: a node operation, or labels said of a node."""
    return isinstance(asked, Asked) and (
        asked.op in OPS
        or (asked.kind == "Node" and asked.op in ("labels", "delete"))
        or (asked.kind in ops.POOLS and asked.op == "scale")
    )


async def typed(toolbox: Toolbox, asked: Asked) -> ops.Change | str:
    if asked.problem:
        return f"Not done: {asked.problem}"
    if asked.kind in ops.POOLS:
        return await _pool_size(toolbox, asked)
    if asked.op == "delete":
        return (
            "I do not delete nodes: drain it ('drain node-2'), and let the machine's "
            "owner remove it. Nothing changed."
        )
    named = await _node(toolbox, list(asked.subject))
    if not named.startswith("node:"):
        return named
    node = ops.Object(kind="Node", name=named.removeprefix("node:"))
    params = asked.params
    try:
        if asked.op in ("cordon", "uncordon"):
            return ops.Cordon(target=node, unschedulable=asked.op == "cordon")
        if asked.op == "drain":
            return await _drain(toolbox, node, params)
        if asked.op in ("taint", "untaint"):
            others = [w for w in asked.subject if w != node.name and not _near(w, node.name)]
            if "key" not in params and asked.op == "untaint" and len(others) == 1:
                params = {**params, "key": others[0]}  # "untaint nod-1 dedicated"
            if "key" not in params:
                return await _which_taint(toolbox, node)
            return ops.Taint(
                target=node,
                key=params["key"],
                value=params.get("value", ""),
                effect=params.get("effect"),
                remove=asked.op == "untaint",
            )
        return ops.SetLabels(target=node, field=params["field"], values=params["values"])
    except ValidationError as exc:
        first = exc.errors()[0]
        return f"Not done: {first['msg']}."


async def _drain(toolbox: Toolbox, node: ops.Object, params: dict[str, Any]) -> ops.Change:
    """A drain with what its plan evicts and the evictions of the last hour, which the
    policies (approvals for large drains, the blast radius) judge it by."""
    force = bool(params.get("force"))
    plan = await toolbox.call("drain_plan", node=node.name, force=force)
    pods = sum(1 for move in plan.get("pods") or [] if move.get("action") == "evict")
    used = await evictions_last_hour(toolbox, now=datetime.now(UTC))
    return ops.Drain(target=node, force=force, pods=pods, evictions_last_hour=float(used),
                     delete_emptydir_data=bool(params.get("delete_emptydir_data")))  # fmt: skip


async def _pool_size(toolbox: Toolbox, asked: Asked) -> ops.Change | str:
    """The pool the words name (a MachineDeployment, in any namespace unless one is said) and
    its new machine count."""
    try:
        listed = await toolbox.call(
            "list_resources", kind="machinedeployments", namespace=asked.namespace,
            output="fields", fields=["spec.replicas"], limit=500,
        )  # fmt: skip
    except ToolFailed as exc:
        if "has no resource type" not in exc.reason:
            raise
        return NO_POOLS
    pools = [i for i in listed.get("items", []) if isinstance(i, dict)]
    names = [str(p["name"]) for p in pools]
    if not names:
        return NO_POOLS
    said = list(asked.subject)
    close = [n for n in names if n in said] or sorted(
        {m for word in said for m in difflib.get_close_matches(word, names, n=2, cutoff=0.8)}
    )
    if len(close) != 1:
        found = f"more than one like {' '.join(said)!r}" if close else "none by that name"
        return f"Which node pool? I found {found}; the pools are: {', '.join(names) or 'none'}."
    [live] = [p for p in pools if p["name"] == close[0]]
    replicas = asked.replicas(live.get("spec.replicas"))
    if replicas is None:
        return f"Not done: pool {close[0]} has no machine count to change relatively; say how many."
    pool = ops.Object(kind="MachineDeployment", name=close[0], namespace=str(live["namespace"]))
    return ops.Scale(target=pool, replicas=replicas)


def _near(word: str, name: str) -> bool:
    return bool(difflib.get_close_matches(word, [name], n=1, cutoff=0.8))


async def _node(toolbox: Toolbox, said: list[str]) -> str:
    """ "node:<name>" for the one node meant, else the question naming the nodes."""
    listed = await toolbox.call("list_resources", kind="nodes", limit=1000)
    names = [str(i["name"]) for i in listed.get("items", []) if isinstance(i, dict)]
    close = [n for n in names if n in said] or sorted(
        {m for word in said for m in difflib.get_close_matches(word, names, n=2, cutoff=0.8)}
    )
    if len(close) == 1:
        return f"node:{close[0]}"
    asked = " ".join(said) or "(none named)"
    found = f"more than one like {asked!r}" if close else f"no node called {asked!r}"
    return f"Which node? I found {found}; the nodes are: {', '.join(names[:20]) or 'none'}."


async def _which_taint(toolbox: Toolbox, node: ops.Object) -> str:
    got = await toolbox.call(
        "get_resource", kind="node", name=node.name, output="fields", fields=["spec.taints"]
    )
    taints = [
        f"{t.get('key')}{'=' + t['value'] if t.get('value') else ''}:{t.get('effect')}"
        for t in got.get("spec.taints") or []
        if isinstance(t, dict)
    ]
    return (
        f"Which taint of {node}? It has: {', '.join(taints) or 'none'}. Say e.g. 'remove the "
        f"taint dedicated from {node.name}'."
    )
