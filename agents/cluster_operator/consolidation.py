"""Node consolidation in the capacity review: a node the cluster hardly uses, whose pods the
other nodes can hold, proposed for draining through the policy store with the saving of
giving it back; drained only under an approved decision.

A node is underused when the CPU and the memory its pods request are both under `UNDERUSED`
of what it offers (requests, not usage: the scheduler places by requests, so only they say
whether the pods fit elsewhere). Its pods fit elsewhere when, largest CPU request first, each
finds another healthy schedulable node with the CPU and memory left and the labels its
`nodeSelector` asks for; a pod whose selector no other node matches keeps the node in
service. DaemonSet pods are not counted: every node runs its own. At least `KEEP` healthy
schedulable nodes stay, so the cluster still outlives the loss of one. Of the nodes that qualify,
the emptiest is proposed, one at a time: none while a node queued for consolidation still
holds its pods, since draining two at once could empty the room the first one's pods were
counted into. The saving is the node's allocatable CPU and memory at
`prices.PRICES`, an estimate for the owners to weigh.

A node of a Cluster API pool (`placement`: its MachineDeployment, its Machine) is proposed only
while its pool may lose a machine (`removal.floor`: not below the pool's min-size annotation nor
a policy's minimum); once drained, the patrol takes it out through the pool (`removal.release`:
its Machine marked for deletion, the MachineDeployment scaled down by one), so the pool does not
bring a fresh node back. The proposal's rationale says so.

The proposal (action drain on the node, its pods and the saving in the rationale) is made
once and remembered in the store, its decision taken up by later reviews; nothing is cordoned
or drained by the review itself. Once approved (at once or by a person later), the node joins
the maintenance queue (`maintenance.queue`), so the patrol drains it in a maintenance window
like any planned work: cordon, the owners told, PDB-respecting evictions within the blast
radius, validation. The review says exactly what was approved, by whom (the policy store by
policy, or the person who granted it: `capacity.approver`) and when the drain will run (the
window's opening on the cluster's clock, or the next patrol when it is open).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, TypedDict, cast

from langgraph.store.base import BaseStore

from agents.cluster_operator import maintenance, migration, nodes, placement, proposals, removal
from agents.cluster_operator.capacity import SYSTEM, approver, gib, millicores, requests
from agents.cluster_operator.clock import cluster_now
from agents.runtime.prices import PRICES
from agents.runtime.toolbox import Toolbox

UNDERUSED = 0.3
KEEP = 2  # schedulable nodes left after a consolidation: one node cannot outlive a node failure
SPACE = ("cluster_operator", "consolidation")
NODE_FIELDS = [
    "metadata.name", "metadata.labels", "spec.unschedulable", "status.conditions",
    "status.allocatable",
]  # fmt: skip
POD_FIELDS = [
    "metadata.namespace", "metadata.name", "metadata.ownerReferences", "spec.containers",
    "spec.nodeName", "spec.nodeSelector", "status.phase",
]  # fmt: skip


class Room(TypedDict):
    node: str
    labels: dict[str, str]
    cpu_m: float  # allocatable
    memory_gib: float
    cpu_used_m: float  # requested by its pods
    memory_used_gib: float
    pods: list[dict[str, Any]]  # {"pod", "cpu_m", "memory_gib", "selector"}


class Consolidation(TypedDict):
    node: str
    pool: str  # the MachineDeployment (namespace/name) it would leave, "" for a node of none
    cpu: float  # requested / allocatable
    memory: float
    pods: list[str]  # namespace/name of the pods that would move
    savings_per_month: float
    proposal: str
    outcome: str  # the decision: approved, rejected, escalated, ""
    queued: bool  # approved and queued for maintenance: the patrol drains it
    approved_by: str  # who approved the drain: the policy store, or a person ("" until then)
    runs: str  # when the drain runs: the window's opening (ISO), or "" for the next patrol
    steps: list[str]


async def review(toolbox: Toolbox, store: BaseStore) -> list[Consolidation]:
    """The emptiest underused node whose pods fit elsewhere, proposed (once) and, as decided,
    drained; a node proposed earlier is carried on instead of proposing another."""
    rooms = await _rooms(toolbox)
    kept = await store.asearch(SPACE)
    if kept:
        return [await _carry_on(toolbox, store, item.key, dict(item.value)) for item in kept]
    if await in_progress(store):
        return []  # its pods have not moved yet: the room they need is not known to be free
    queued = {e["node"] for e in await maintenance.entries(store)}
    pools = await placement.read(toolbox)
    held = {node for pool in pools if await removal.floor(toolbox, pool) for node in pool.machines}
    found = candidate([r for r in rooms if r["node"] not in queued], keep=frozenset(held))
    if found is None:
        return []
    found["pool"] = next((p.key for p in pools if found["node"] in p.machines), "")
    return [await _propose(toolbox, store, found)]


async def in_progress(store: BaseStore) -> list[str]:
    """The nodes queued for consolidation whose pods have not all moved yet."""
    return [
        e["node"] for e in await maintenance.entries(store)
        if e["state"] != "out" and any(r.startswith("consolidation (") for r in e["reasons"])
    ]  # fmt: skip


def candidate(rooms: list[Room], *, keep: frozenset[str] = frozenset()) -> Consolidation | None:
    """The emptiest underused node whose pods the others can hold, unproposed; the nodes in
    `keep` hold pods, but are not given back."""
    underused = sorted(
        (r for r in rooms if load(r) < UNDERUSED and len(rooms) > KEEP and r["node"] not in keep),
        key=lambda r: r["cpu_used_m"] / r["cpu_m"] + r["memory_used_gib"] / r["memory_gib"],
    )
    for room in underused:
        if fits(room["pods"], [r for r in rooms if r["node"] != room["node"]]):
            saved = room["cpu_m"] / 1000 * PRICES["cpu"] + room["memory_gib"] * PRICES["memory_gib"]
            return Consolidation(
                node=room["node"], pool="", cpu=round(room["cpu_used_m"] / room["cpu_m"], 3),
                memory=round(room["memory_used_gib"] / room["memory_gib"], 3),
                pods=[p["pod"] for p in room["pods"]], savings_per_month=round(saved, 2),
                proposal="", outcome="", queued=False, approved_by="", runs="", steps=[],
            )  # fmt: skip
    return None


def load(room: Room) -> float:
    """The larger of the CPU and memory requested, as a share of what the node offers."""
    return max(room["cpu_used_m"] / room["cpu_m"], room["memory_used_gib"] / room["memory_gib"])


def fits(pods: list[dict[str, Any]], others: list[Room]) -> bool:
    """Whether every pod finds a place on the other nodes, largest CPU request first."""
    left = {r["node"]: [r["cpu_m"] - r["cpu_used_m"], r["memory_gib"] - r["memory_used_gib"]]
            for r in others}  # fmt: skip
    for pod in sorted(pods, key=lambda p: -p["cpu_m"]):
        for room in others:
            free = left[room["node"]]
            selected = all(room["labels"].get(k) == v for k, v in pod["selector"].items())
            if selected and free[0] >= pod["cpu_m"] and free[1] >= pod["memory_gib"]:
                free[0] -= pod["cpu_m"]
                free[1] -= pod["memory_gib"]
                break
        else:
            return False
    return True


async def _propose(toolbox: Toolbox, store: BaseStore, found: Consolidation) -> Consolidation:
    node, pods = found["node"], found["pods"]
    since = datetime.now(UTC)
    used = await migration.evictions_last_hour(toolbox, now=since)
    record = await toolbox.call(
        "propose", action="drain", target=f"node/{node}", pods=len(pods),
        metrics={
            "evictions_last_hour": float(used), "node_cpu_requested": found["cpu"],
            "node_memory_requested": found["memory"],
        },
        savings_per_month=found["savings_per_month"], risk="low",
        rationale=(
            f"I intend to drain node {node} to consolidate: its pods request {found['cpu']:.0%} "
            f"of its CPU and {found['memory']:.0%} of its memory, and the other nodes can hold "
            f"them; giving it back saves about ${found['savings_per_month']:.2f} a month. "
            f"Pods that would move: {', '.join(pods) or 'none'}. Nothing is cordoned before "
            "the decision; the drain never breaks a PodDisruptionBudget."
            + (f" It is a node of pool {found['pool']}: once drained, its Machine is marked for "
               "deletion and the pool scaled down by one, so no fresh node replaces it."
               if found["pool"] else "")
        ),
    )  # fmt: skip
    decided = proposals.decided(record)
    intent = {
        "proposal": decided.proposal, "decision": proposals.remember(decided), "shown": dict(found),
    }  # fmt: skip
    await store.aput(SPACE, node, intent)
    found["steps"].append(
        f"proposed draining {node} as {decided.proposal}: {decided.outcome or 'undecided'}"
    )
    return await _as_decided(toolbox, store, node, intent, {**found, "proposal": decided.proposal})


async def _carry_on(
    toolbox: Toolbox, store: BaseStore, node: str, intent: dict[str, Any]
) -> Consolidation:
    shown = cast(Consolidation, {**intent["shown"], "steps": [], "proposal": intent["proposal"]})
    kept = proposals.remembered(intent["decision"])
    decided = await proposals.settle(toolbox, kept, waiter=f"consolidation {node}")
    if decided != kept:
        intent = {**intent, "decision": proposals.remember(decided)}
        await store.aput(SPACE, node, intent)
    shown["steps"].append(f"proposal {decided.proposal} is {decided.outcome or 'undecided'}")
    return await _as_decided(toolbox, store, node, intent, shown)


async def _as_decided(
    toolbox: Toolbox, store: BaseStore, node: str, intent: dict[str, Any], shown: Consolidation
) -> Consolidation:
    decided = proposals.remembered(intent["decision"])
    shown = {**shown, "outcome": decided.outcome or "escalated"}
    if decided.outcome == "rejected":
        await store.adelete(SPACE, node)
        shown["steps"].append(f"rejected: {'; '.join(decided.reasons)}; nothing changed")
        return shown
    if not decided.approved:
        shown["steps"].append(f"waiting for a person: approval {decided.approval}; nothing changed")
        return shown
    at = await cluster_now(toolbox)
    entry = await maintenance.queue(store, node, f"consolidation ({decided.proposal})", at=at)
    await store.adelete(SPACE, node)
    by = await approver(toolbox, decided.proposal)
    plan = await toolbox.call("drain_plan", node=node)
    pods = sum(1 for p in plan["pods"] if p["action"] == "evict")
    opens = await maintenance.window(toolbox, node, pods, at=at)
    when = (
        f"in its maintenance window, which opens at {opens} (cluster time now {at.isoformat()})"
        if opens
        else "at the next patrol: its maintenance window is open now"
    )
    shown["steps"].append(
        f"approved by {by} (proposal {decided.proposal}): drain node {node}, evicting {pods} "
        f"pod(s) ({decided.text}); nothing "
        f"is cordoned yet: queued for maintenance with {'; '.join(entry['reasons'])}, the "
        f"patrol drains it {when}"
    )
    return {**shown, "queued": True, "approved_by": by, "runs": opens}


def said(found: list[Consolidation], *, waiting: Sequence[str] = ()) -> str:
    if not found and waiting:
        return (
            f"Consolidation: node {', '.join(waiting)} is queued and not yet drained; no other "
            "node is proposed until its pods have moved, so the room they take is counted once."
        )
    if not found:
        return "No node is both underused and emptiable: nothing to consolidate."
    lines = []
    for c in found:
        lines.append(
            f"Consolidation: node {c['node']} requests {c['cpu']:.0%} CPU and {c['memory']:.0%} "
            f"memory; draining it saves about ${c['savings_per_month']:.2f}/month "
            f"({len(c['pods'])} pod(s) move): {c['outcome']}"
        )
        lines += [f"  {step}" for step in c["steps"]]
    return "\n".join(lines)


async def _rooms(toolbox: Toolbox) -> list[Room]:
    """The healthy schedulable nodes, with what their pods request."""
    listed = await toolbox.call("list_resources", kind="Node", output="fields", fields=NODE_FIELDS)
    rooms: dict[str, Room] = {}
    for item in listed.get("items", []):
        healthy = not any(nodes.failing(c) for c in item.get("status.conditions") or [])
        offered = item.get("status.allocatable") or {}
        if healthy and not item.get("spec.unschedulable"):
            rooms[str(item["metadata.name"])] = Room(
                node=str(item["metadata.name"]), labels=dict(item.get("metadata.labels") or {}),
                cpu_m=millicores(str(offered.get("cpu", "0"))) or 1.0,
                memory_gib=gib(str(offered.get("memory", "0"))) or 1.0,
                cpu_used_m=0.0, memory_used_gib=0.0, pods=[],
            )  # fmt: skip
    pods = await toolbox.call(
        "list_resources", kind="pods", output="fields", fields=POD_FIELDS, limit=5000
    )
    for pod in pods.get("items", []):
        room = rooms.get(str(pod.get("spec.nodeName") or ""))
        if room is None or pod.get("status.phase") not in ("Pending", "Running"):
            continue
        cpu, memory = requests(pod.get("spec.containers") or [])
        room["cpu_used_m"] += cpu
        room["memory_used_gib"] += memory
        owners = pod.get("metadata.ownerReferences") or []
        if any(o.get("kind") == "DaemonSet" for o in owners):
            continue
        if pod["metadata.namespace"] in SYSTEM and not owners:
            continue  # a static (mirror) pod stays with its node
        room["pods"].append(
            {
                "pod": f"{pod['metadata.namespace']}/{pod['metadata.name']}",
                "cpu_m": cpu,
                "memory_gib": memory,
                "selector": dict(pod.get("spec.nodeSelector") or {}),
            }
        )
    return list(rooms.values())
