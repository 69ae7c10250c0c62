"""A node of a Cluster API pool, drained for consolidation, taken out of its pool: its Machine
marked `cluster.x-k8s.io/delete-machine` and the MachineDeployment scaled down by one, so Cluster
API deletes exactly that machine (and its Node) instead of bringing a fresh node back.

A pool never goes below its floor: the cluster-autoscaler's min-size annotation
(`cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size`) or the owners' policies (a
CapacityPolicy's minimum: the dry run of the scale-down rejects or counters it). Consolidation
asks `floor` before it proposes a pool node's drain, so such a node is not drained at all; the
scale-down is judged again when the node is out, as its own proposal (action scale on the
MachineDeployment), since the pool may have changed since. A refused one leaves the node
drained and cordoned (its maintenance entry stays `out`: uncordoning it returns it to service)
and is not proposed again while the pool keeps the replicas it was judged on; an escalated one
waits for the person's answer (`claim_approval`, once).

Once removed, the node's maintenance entry is dropped (the Node is going away, so nothing is
left to uncordon), and the removal waits up to `SETTLE` cluster seconds for the Node to leave.
A node of no pool stays as consolidation left it: drained and cordoned, for its owner to return.
"""

from __future__ import annotations

from typing import TypedDict

from langgraph.store.base import BaseStore

from agents.cluster_operator import maintenance, placement, proposals
from agents.cluster_operator.capacity import approver
from agents.cluster_operator.maintenance import Maintenance
from agents.cluster_operator.placement import Pool
from agents.runtime.errors import ToolFailed
from agents.runtime.loop.validation import LoopSettings, Verdict, until
from agents.runtime.toolbox import Toolbox

SPACE = ("cluster_operator", "pool-removals")  # node -> the scale-down's proposal and decision
DELETE_MACHINE = "cluster.x-k8s.io/delete-machine"
SETTLE = 30.0  # cluster seconds the patrol waits for the removed node to leave
CONSOLIDATION = "consolidation ("  # how a consolidation's reason begins in the maintenance queue


class Removal(TypedDict):
    node: str
    pool: str  # MachineDeployment namespace/name
    machine: str
    replicas_from: int
    replicas_to: int
    proposal: str
    outcome: str  # approved, rejected, escalated, "" (not proposed: the pool is at its floor)
    removed: bool
    steps: list[str]


async def floor(toolbox: Toolbox, pool: Pool) -> str:
    """Why the pool may not lose a machine now, "" when it may."""
    if pool.replicas - 1 < pool.min_size:
        return f"pool {pool.key} is at its min size ({pool.min_size})"
    judged = await toolbox.call(
        "evaluate_action", action="scale", target=f"machinedeployment/{pool.name}",
        namespace=pool.namespace, from_replicas=pool.replicas, replicas=pool.replicas - 1,
    )  # fmt: skip
    if judged.get("verdict") in ("reject", "counter"):
        why = "; ".join(str(r) for r in judged.get("reasons") or []) or "policy keeps its size"
        return f"pool {pool.key} may not go below {pool.replicas}: {why}"
    return ""


async def release(toolbox: Toolbox, store: BaseStore, queue: list[Maintenance]) -> list[Removal]:
    """Each pool node the maintenance queue holds out after a consolidation's drain, removed
    through its pool as decided."""
    drained = [
        m["node"] for m in queue
        if m["status"] == "out" and any(r.startswith(CONSOLIDATION) for r in m["reasons"])
    ]  # fmt: skip
    if not drained:
        return []
    pools = await placement.read(toolbox)
    done = []
    for node in drained:
        pool = next((p for p in pools if p.machines.get(node)), None)
        if pool is not None:
            done.append(await _remove(toolbox, store, node, pool))
    return done


async def _remove(toolbox: Toolbox, store: BaseStore, node: str, pool: Pool) -> Removal:
    shown = Removal(
        node=node, pool=pool.key, machine=pool.machines[node], replicas_from=pool.replicas,
        replicas_to=pool.replicas - 1, proposal="", outcome="", removed=False, steps=[],
    )  # fmt: skip
    stored = await store.aget(SPACE, node)
    kept = None if stored is None else dict(stored.value)
    if kept is not None and kept["from"] != pool.replicas:
        await store.adelete(SPACE, node)  # the pool changed since: judged afresh
        kept = None
    if kept is not None:
        decided = await proposals.settle(
            toolbox, proposals.remembered(kept["decision"]), waiter=f"pool-removal {node}"
        )
        if decided.outcome == "rejected" and kept["decision"]["outcome"] == "rejected":
            shown["steps"].append(
                f"the scale-down was rejected earlier (proposal {decided.proposal}): "
                f"{'; '.join(decided.reasons)}; node {node} stays drained and cordoned while "
                f"{pool.key} has {pool.replicas} machine(s)"
            )
            return {**shown, "proposal": decided.proposal, "outcome": "rejected"}
        shown["steps"].append(f"proposal {decided.proposal} is {decided.outcome or 'undecided'}")
    elif pool.replicas - 1 < pool.min_size:
        shown["steps"].append(
            f"node {node} stays drained and cordoned: pool {pool.key} is at its min size "
            f"({pool.min_size})"
        )
        return shown
    else:
        decided = await _propose(toolbox, node, pool)
        shown["steps"].append(
            f"proposed scale MachineDeployment {pool.key} {pool.replicas} -> {pool.replicas - 1} "
            f"to remove node {node} as {decided.proposal}: {decided.outcome or 'undecided'}"
        )
    await store.aput(SPACE, node, {"from": pool.replicas, "decision": proposals.remember(decided)})
    return await _as_decided(toolbox, store, decided, {**shown, "proposal": decided.proposal})


async def _propose(toolbox: Toolbox, node: str, pool: Pool) -> proposals.Decided:
    record = await toolbox.call(
        "propose", action="scale", target=f"machinedeployment/{pool.name}",
        namespace=pool.namespace, from_replicas=pool.replicas, replicas=pool.replicas - 1,
        risk="low", rationale=(
            f"Node {node} of pool {pool.key} was drained to consolidate and holds no workload. "
            f"I intend to mark its Machine {pool.machines[node]} for deletion and scale the pool "
            f"from {pool.replicas} to {pool.replicas - 1}, so Cluster API removes exactly that "
            "machine and does not bring a fresh node back."
        ),
    )  # fmt: skip
    return proposals.decided(record)


async def _as_decided(
    toolbox: Toolbox, store: BaseStore, decided: proposals.Decided, shown: Removal
) -> Removal:
    node, machine = shown["node"], shown["machine"]
    to = int((decided.action.get("replicas") or {}).get("to", shown["replicas_to"]))
    shown = {**shown, "outcome": decided.outcome or "escalated"}
    if decided.outcome == "rejected" or (decided.approved and to >= shown["replicas_from"]):
        await store.aput(SPACE, node, {"from": shown["replicas_from"],
                                       "decision": {**proposals.remember(decided),
                                                    "outcome": "rejected"}})  # fmt: skip
        why = "; ".join(decided.reasons) or f"decided at {to} machine(s)"
        shown["steps"].append(f"not removed: {why}; node {node} stays drained and cordoned")
        return {**shown, "outcome": "rejected"}
    if not decided.approved:
        shown["steps"].append(f"waiting for a person: approval {decided.approval}; nothing changed")
        return shown
    namespace, name = shown["pool"].split("/", 1)
    await toolbox.call(
        "patch", kind="machines", name=machine, namespace=namespace, patch_type="merge",
        patch={"metadata": {"annotations": {DELETE_MACHINE: "true"}}},
    )  # fmt: skip
    await toolbox.call("scale", kind="machinedeployment", name=name, namespace=namespace,
                       replicas=to, proposal=decided.proposal)  # fmt: skip
    await store.adelete(SPACE, node)
    await store.adelete(maintenance.SPACE, node)  # the Node goes: nothing left to uncordon
    by = await approver(toolbox, decided.proposal)
    shown["steps"].append(
        f"marked Machine {machine} {DELETE_MACHINE} and scaled MachineDeployment {shown['pool']} "
        f"{shown['replicas_from']} -> {to} by gated writes (patch, scale), under proposal "
        f"{decided.proposal} approved by {by}"
    )
    settle = LoopSettings(deadline_seconds=SETTLE)
    verdict = await until(toolbox, lambda: _gone(toolbox, node), settle, late="still there")
    shown["steps"].append("; ".join(verdict.evidence))
    return {**shown, "replicas_to": to, "removed": True}


async def _gone(toolbox: Toolbox, node: str) -> Verdict:
    try:
        await toolbox.call(
            "get_resource", kind="Node", name=node, output="fields",
            fields=["metadata.deletionTimestamp"],
        )  # fmt: skip
    except ToolFailed as exc:
        if "not found" in exc.reason.lower():
            return Verdict(True, [f"node {node} has left the cluster"])
        raise
    return Verdict(False, [f"node {node} is still there, its Machine being deleted"])
