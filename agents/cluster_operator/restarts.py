"""Rising restart rates per node: the health patrol's reading of container restarts, and a node
whose restarts climb while the others stay quiet handed to the proactive-migration path.

A node can be failing long before a condition says so (a bad NIC, a flaky disk, a kernel
bug): the pods on it restart while the same workloads elsewhere do not. Each patrol counts the
container restarts of every pod, by pod uid and node, and keeps the counts in the agent's store;
the next patrol compares. A node is *degrading* when its pods' restarts rose by at least `RISE`
since the last patrol while the other nodes' rose on average by under `QUIET` of that: restarts
everywhere are a bad rollout (the Dev Team's business), restarts on one node are the node's.
The first patrol only records. A pod is compared with itself (its uid), so a pod replaced
since the last patrol counts its restarts from zero and a deleted one counts nothing.

A degrading node goes the way a GPU fault goes (`migration.move_off`: cordon, drain plan,
eviction intent, the policy's decision, PDB-respecting drain, validation); the node is kept in
the store until its migration ends, so a later patrol carries on a drain that waits for a
person even once the pods have moved and the restarts stopped rising.
"""

from __future__ import annotations

from typing import Any, TypedDict

from langgraph.store.base import BaseStore

from agents.cluster_operator import migration
from agents.cluster_operator.migration import Migration
from agents.runtime.toolbox import Toolbox

RISE, QUIET = 5, 0.25
SPACE = ("cluster_operator", "restarts")
COUNTS, HANDED = "counts", "handed-off"  # the last patrol's counts; nodes being moved off
FINISHED = ("drained", "rejected")  # a migration in these states is over
POD_FIELDS = [
    "metadata.namespace", "metadata.name", "metadata.uid", "spec.nodeName",
    "status.containerStatuses",
]  # fmt: skip


class Degrading(TypedDict):
    node: str
    cordoned: bool
    rise: int  # the node's pods' restarts since the last patrol
    others: float  # the other nodes' average rise over the same time
    pods: list[str]  # evidence: "shop/crash-7d9f: +4 (9 restarts)", largest rise first


async def patrol(
    toolbox: Toolbox, store: BaseStore, *, skip: frozenset[str] = frozenset()
) -> tuple[list[Degrading], list[Migration]]:
    """This patrol's degrading nodes and the migrations of every node handed off (new and
    carried on); `skip`: nodes the patrol already moves off for a failing condition."""
    cordoned = await _nodes(toolbox)
    found = await degrading(toolbox, store, cordoned)
    kept = await store.aget(SPACE, HANDED)
    handed: dict[str, str] = dict(kept.value) if kept is not None else {}
    handed.update({d["node"]: because(d) for d in found if d["node"] not in skip})
    moved: list[Migration] = []
    for node, why in sorted(handed.items()):
        if node in skip or node not in cordoned:
            continue
        moved.append(
            await migration.move_off(
                toolbox, store, node, cordoned=cordoned[node], because=why,
                first=f"node {node} is degrading: {why}",
            )
        )  # fmt: skip
    await store.aput(
        SPACE,
        HANDED,
        {n: w for n, w in handed.items() if n in cordoned and n not in _ended(moved)},
    )
    return found, moved


async def degrading(
    toolbox: Toolbox, store: BaseStore, cordoned: dict[str, bool]
) -> list[Degrading]:
    """The nodes whose restarts rose alone since the last patrol; this patrol's counts kept."""
    counts = await _counts(toolbox, cordoned)
    kept = await store.aget(SPACE, COUNTS)
    await store.aput(SPACE, COUNTS, counts)
    if kept is None:
        return []  # the first patrol only records
    rises = {node: _rises(pods, kept.value.get(node, {})) for node, pods in counts.items()}
    totals = {node: sum(r for _, r, _ in rows) for node, rows in rises.items()}
    found: list[Degrading] = []
    for node, rise in totals.items():
        others = [t for n, t in totals.items() if n != node]
        average = sum(others) / len(others) if others else 0.0
        if rise >= RISE and average < QUIET * rise:
            evidence = sorted(rises[node], key=lambda row: -row[1])
            found.append(
                Degrading(
                    node=node, cordoned=cordoned[node], rise=rise, others=round(average, 2),
                    pods=[f"{pod}: +{r} ({total} restarts)" for pod, r, total in evidence if r],
                )
            )  # fmt: skip
    return sorted(found, key=lambda d: -d["rise"])


def because(found: Degrading) -> str:
    return (
        f"its pods restarted {found['rise']} time(s) since the last patrol while the other "
        f"nodes' restarted {found['others']:g} on average ({'; '.join(found['pods'])})"
    )


def said(found: list[Degrading], moved: list[Migration]) -> str:
    """The degrading nodes with their evidence, and how far each hand-off went."""
    lines = [f"Node {d['node']} is degrading: {because(d)}." for d in found]
    for m in moved:
        lines.append(f"Node {m['node']}, moved off for its restarts: {m['status']}.")
        lines += [f"  {n}. {step}" for n, step in enumerate(m["steps"], 1)]
    return "\n".join(lines)


async def _nodes(toolbox: Toolbox) -> dict[str, bool]:
    """Every node, and whether it is cordoned."""
    listed = await toolbox.call(
        "list_resources", kind="Node", output="fields",
        fields=["metadata.name", "spec.unschedulable"],
    )  # fmt: skip
    return {
        str(i["metadata.name"]): bool(i.get("spec.unschedulable")) for i in listed.get("items", [])
    }


async def _counts(toolbox: Toolbox, nodes: dict[str, bool]) -> dict[str, dict[str, Any]]:
    """Per node, per pod uid: the pod's name and its containers' restarts now."""
    listed = await toolbox.call(
        "list_resources", kind="pods", output="fields", fields=POD_FIELDS, limit=5000
    )
    counts: dict[str, dict[str, Any]] = {node: {} for node in nodes}
    for pod in listed.get("items", []):
        node = str(pod.get("spec.nodeName") or "")
        if node not in counts:
            continue  # unscheduled, or on a node gone since the listing
        statuses = pod.get("status.containerStatuses") or []
        counts[node][str(pod["metadata.uid"])] = {
            "pod": f"{pod['metadata.namespace']}/{pod['metadata.name']}",
            "restarts": sum(int(s.get("restartCount") or 0) for s in statuses),
        }
    return counts


def _rises(now: dict[str, Any], before: dict[str, Any]) -> list[tuple[str, int, int]]:
    """(pod, restarts since the last patrol, restarts in all) for each pod on the node now."""
    rows = []
    for uid, pod in now.items():
        earlier = int((before.get(uid) or {}).get("restarts", 0))
        rows.append((str(pod["pod"]), max(0, int(pod["restarts"]) - earlier), int(pod["restarts"])))
    return rows


def _ended(moved: list[Migration]) -> set[str]:
    return {m["node"] for m in moved if m["status"] in FINISHED}
