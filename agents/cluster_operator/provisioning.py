"""Provisioning in the patrol: pods the scheduler cannot place for want of a node, and the node
pool grown for them (the cluster-autoscaler's scale-up, proposed through the policy store).

A pod waits for a node when it is Pending, unbound, and its PodScheduled condition is False with
reason Unschedulable for a reason a new node can lift (`LIFTABLE`: too little CPU, memory, GPUs
or room for pods, a taint it does not tolerate, node affinity or a nodeSelector no node matches,
cordoned nodes, no node at all). A pod waiting for anything else (a volume, pod affinity) is its
owners' to fix.

Each waiting pod goes to a pool (`placement` reads the pools' new nodes, `packing` packs the
pods): the cheapest pool whose new node it fits and that may still grow, so a CPU pod never grows
the GPU pool while another pool holds it; first onto the room left on nodes already coming for
earlier scale-ups, then onto new nodes, as many as the pool's max size allows. A pod that fits no
pool, or only pools at their max size, changes nothing and is explained ("no pool has a node
with 4 GPUs").

A pool's scale-up is proposed in the policy store (action scale on the MachineDeployment, the
replicas from and to, the pods and why in the rationale) and applied as decided: with the gated
`scale` carrying the proposal's id, at the counter's count when countered; not at all when
rejected (a CostPolicy capping the pool, say), the rules cited. Then validation: up to `SETTLE`
cluster seconds for the new nodes to join Ready and the pods to run on them (bound, and Running or
done: a pod placed but still pulling its image has not got what it waited for); what still waits is
said, and later patrols look again.

Each scale-up is remembered in the agent's store (by proposal) until validated, so a later patrol
neither proposes again for the pods it was made for nor counts their room twice: while its nodes
are coming (up to `PROVISION` cluster seconds after it was applied, the autoscaler's
max-node-provision-time) its pods are its own; an escalated one waits for the person's answer
(`claim_approval`, once); a rejected one is not proposed again while the pool has the replicas it
was judged on and only its pods wait for that pool.
On a cluster without node pools (no Cluster API, or no MachineDeployment) it reads the pending
pods and says nothing: there is nothing it could grow.
Left out: balancing similar pools, priority expanders, and the room existing nodes still have
(the scheduler's to use: a pod it could place is not Unschedulable).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, TypedDict

from langgraph.store.base import BaseStore

from agents.cluster_operator import packing, placement, proposals
from agents.cluster_operator.capacity import approver
from agents.cluster_operator.clock import cluster_now
from agents.cluster_operator.packing import Room
from agents.cluster_operator.placement import POD_FIELDS, POOL_LABEL, Pod, is_ready
from agents.runtime.errors import ToolFailed
from agents.runtime.loop.validation import LoopSettings, Verdict, until
from agents.runtime.toolbox import Toolbox

SPACE = ("cluster_operator", "provisioning")
SETTLE = 60.0  # cluster seconds the patrol waits for the new nodes and the pods' binding
PROVISION = 900.0  # cluster seconds new nodes may take before their pods are judged afresh
LIFTABLE = (
    "Insufficient ", "Too many pods", "untolerated taint", "didn't match Pod's node affinity",
    "were unschedulable", "no nodes available",
)  # fmt: skip
Status = Literal[
    "validated", "waiting-for-nodes", "waiting-for-approval", "rejected", "timed-out", "failed",
    "not-needed",
]  # fmt: skip


@dataclass(frozen=True)
class Waiting:
    pod: Pod
    why: str  # the scheduler's message


class ScaleUp(TypedDict):
    pool: str  # MachineDeployment namespace/name
    pods: list[str]  # the pods it is for
    replicas_from: int
    replicas_to: int  # as proposed
    applied: int | None  # the replica count scaled to, once applied
    proposal: str
    outcome: str  # the decision: approved, approved-as-countered, rejected, escalated
    approved_by: str
    status: Status
    steps: list[str]


class Unfit(TypedDict):
    pod: str
    why: str


class Provisioning(TypedDict):
    waiting: list[str]  # the pods waiting for a node now
    scale_ups: list[ScaleUp]
    unfit: list[Unfit]


async def review(
    toolbox: Toolbox, store: BaseStore, *, busy: frozenset[str] = frozenset()
) -> Provisioning:
    """The pods waiting for a node, each earlier scale-up carried on, and the pools grown for
    the pods none covers; nothing is read beyond the pods while none waits and none is kept.
    `busy`: pools an upgrade is rolling (its surge and drains make pods wait a moment), never
    grown meanwhile."""
    waiting = await unschedulable(toolbox)
    kept = {item.key: dict(item.value) for item in await store.asearch(SPACE, limit=100)}
    found = Provisioning(waiting=[w.pod.key for w in waiting], scale_ups=[], unfit=[])
    if not waiting and not kept:
        return found
    pools = {p.key: p for p in await placement.read(toolbox) if p.key not in busy}
    if not pools and not kept:
        return found  # no node pool to grow: nothing to do, nothing to say
    pods = {w.pod.key: w.pod for w in waiting}
    rooms = {key: Room(pool, pool.shape) for key, pool in pools.items() if pool.shape}
    covered: set[str] = set()
    for proposal, record in kept.items():
        if record["status"] == "rejected":
            continue  # judged against this review's demand below
        shown = await _carry_on(toolbox, store, proposal, record, pods)
        found["scale_ups"].append(shown)
        mine = [pods[p] for p in record["pods"] if p in pods]
        covered |= {p.key for p in mine}  # judged (or placed) just now: not demand again
        room = rooms.get(record["pool"])
        if room is not None and shown["status"] == "waiting-for-nodes":
            made = int(shown["applied"] or 0) - shown["replicas_from"]
            room.coming += packing.coming(room.pool, room.shape, made, mine)
    demand = [w.pod for w in waiting if w.pod.key not in covered]
    left = packing.pack(demand, list(rooms.values()), pools=list(pools.values()))
    found["unfit"] = [Unfit(pod=pod, why=why) for pod, why in left]
    why = {w.pod.key: w.why.split(" preemption:")[0].rstrip(".") for w in waiting}
    for room in rooms.values():
        if not room.pods:
            continue
        earlier = _rejected_earlier(kept, room)
        if earlier is not None:
            found["scale_ups"].append(earlier)
            continue
        for proposal, record in kept.items():
            if record["pool"] == room.pool.key and record["status"] == "rejected":
                await store.adelete(SPACE, proposal)  # judged on other pods or replicas
        found["scale_ups"].append(await _scale_up(toolbox, store, room, why))
    return found


async def unschedulable(toolbox: Toolbox) -> list[Waiting]:
    listed = await toolbox.call(
        "list_resources", kind="pods", field_selector="status.phase=Pending", output="fields",
        fields=[*POD_FIELDS, "spec.nodeName", "status.conditions"], limit=1000,
    )  # fmt: skip
    found = []
    for item in listed.get("items", []):
        conditions = item.get("status.conditions") or []
        scheduled: dict[str, Any] = next(
            (c for c in conditions if c.get("type") == "PodScheduled"), {}
        )
        message = str(scheduled.get("message") or "")
        if item.get("spec.nodeName") or scheduled.get("reason") != "Unschedulable":
            continue
        if any(reason in message for reason in LIFTABLE):
            found.append(Waiting(placement.pod_of(item), message))
    return found


async def _scale_up(toolbox: Toolbox, store: BaseStore, room: Room, why: dict[str, str]) -> ScaleUp:
    pool, shape = room.pool, room.shape
    to = pool.replicas + len(room.new)
    grouped: dict[str, list[str]] = {}
    for pod in room.pods:
        grouped.setdefault(why[pod], []).append(pod)
    waits = "; ".join(f"{', '.join(pods)} ({message})" for message, pods in grouped.items())
    record = await toolbox.call(
        "propose", action="scale", target=f"machinedeployment/{pool.name}",
        namespace=pool.namespace, from_replicas=pool.replicas, replicas=to,
        metrics={"pending_pods": float(len(room.pods))}, risk="low",
        rationale=(
            f"I intend to grow node pool {pool.key} from {pool.replicas} to {to} machine(s): "
            f"{len(room.pods)} pod(s) cannot be scheduled and fit a new node of it "
            f"({shape.said()}, read from {shape.source}), the cheapest pool that holds them. "
            f"Waiting: {waits}"
        ),
    )  # fmt: skip
    decided = proposals.decided(record)
    kept = {
        "pool": pool.key, "pods": room.pods, "from": pool.replicas, "to": to, "applied": None,
        "applied_at": "", "before": sorted(pool.nodes), "status": "waiting-for-approval",
        "decision": proposals.remember(decided), "approved_by": "",
    }  # fmt: skip
    await store.aput(SPACE, decided.proposal, kept)
    shown = _shown(decided.proposal, kept)
    shown["steps"].append(
        f"proposed scale MachineDeployment {pool.key} {pool.replicas} -> {to} for "
        f"{', '.join(room.pods)} as {decided.proposal}: {decided.outcome or 'undecided'}"
    )
    return await _as_decided(toolbox, store, decided, kept, shown)


async def _carry_on(
    toolbox: Toolbox,
    store: BaseStore,
    proposal: str,
    kept: dict[str, Any],
    pods: dict[str, Pod],
) -> ScaleUp:
    shown = _shown(proposal, kept)
    if kept["applied"] is None and not any(p in pods for p in kept["pods"]):
        await store.adelete(SPACE, proposal)
        shown["steps"].append(f"proposal {proposal}: its pods no longer wait; nothing scaled")
        return {**shown, "status": "not-needed"}
    if kept["applied"] is None:
        decided = await proposals.settle(
            toolbox, proposals.remembered(kept["decision"]), waiter=f"provisioning {proposal}"
        )
        kept = {**kept, "decision": proposals.remember(decided)}
        await store.aput(SPACE, proposal, kept)
        shown["steps"].append(f"proposal {proposal} is {decided.outcome or 'undecided'}")
        return await _as_decided(toolbox, store, decided, kept, shown)
    held, seen = await _progress(toolbox, kept)
    age = (await cluster_now(toolbox) - datetime.fromisoformat(kept["applied_at"])).total_seconds()
    if held:
        await store.adelete(SPACE, proposal)
        shown["steps"].append(f"validated: {seen}")
        return {**shown, "status": "validated"}
    if age > PROVISION:
        await store.adelete(SPACE, proposal)
        shown["steps"].append(
            f"not done {age:.0f} s after the scale: {seen}; the next patrol judges its pods afresh"
        )
        return {**shown, "status": "timed-out"}
    shown["steps"].append(f"scaled {age:.0f} s ago, still coming: {seen}")
    return {**shown, "status": "waiting-for-nodes"}


async def _as_decided(
    toolbox: Toolbox,
    store: BaseStore,
    decided: proposals.Decided,
    kept: dict[str, Any],
    shown: ScaleUp,
) -> ScaleUp:
    shown = {**shown, "outcome": decided.outcome or "escalated"}
    if decided.outcome == "rejected":
        await store.aput(SPACE, decided.proposal, {**kept, "status": "rejected"})
        shown["steps"].append(
            f"rejected: {'; '.join(decided.reasons)}; nothing scaled, and it is not proposed "
            f"again while {shown['pool']} has {kept['from']} machine(s) and only these pods wait"
        )
        return {**shown, "status": "rejected"}
    if not decided.approved:
        shown["steps"].append(f"waiting for a person: approval {decided.approval}; nothing scaled")
        return {**shown, "status": "waiting-for-approval"}
    to = int((decided.action.get("replicas") or {}).get("to", kept["to"]))
    if to <= kept["from"]:  # countered down to the size it has: a refusal, remembered as one
        await store.aput(SPACE, decided.proposal, {**kept, "status": "rejected"})
        shown["steps"].append(f"decided at {to} machine(s), no more than now: nothing scaled")
        return {**shown, "status": "rejected"}
    namespace, name = kept["pool"].split("/", 1)
    by = await approver(toolbox, decided.proposal)
    try:
        await toolbox.call("scale", kind="machinedeployment", name=name, namespace=namespace,
                           replicas=to, proposal=decided.proposal)  # fmt: skip
    except ToolFailed as failed:
        await store.adelete(SPACE, decided.proposal)
        shown["steps"].append(f"the scale failed: {failed.reason}; nothing changed")
        return {**shown, "status": "failed"}
    kept = {**kept, "applied": to, "applied_at": (await cluster_now(toolbox)).isoformat(),
            "approved_by": by, "status": "waiting-for-nodes"}  # fmt: skip
    await store.aput(SPACE, decided.proposal, kept)
    shown = {**shown, "applied": to, "approved_by": by}
    shown["steps"].append(
        f"scaled MachineDeployment {kept['pool']} {kept['from']} -> {to} by the gated write "
        f"(scale), under proposal {decided.proposal} approved by {by} ({decided.text})"
    )
    verdict = await until(
        toolbox, lambda: _look(toolbox, kept), LoopSettings(deadline_seconds=SETTLE),
        late="not all there yet",
    )  # fmt: skip
    if verdict.held:
        await store.adelete(SPACE, decided.proposal)
        shown["steps"].append(f"validated: {'; '.join(verdict.evidence)}")
        return {**shown, "status": "validated"}
    shown["steps"].append(f"still coming: {'; '.join(verdict.evidence)}; later patrols look again")
    return {**shown, "status": "waiting-for-nodes"}


async def _look(toolbox: Toolbox, kept: dict[str, Any]) -> Verdict:
    held, seen = await _progress(toolbox, kept)
    return Verdict(held, [seen])


async def _progress(toolbox: Toolbox, kept: dict[str, Any]) -> tuple[bool, str]:
    """Whether the new nodes joined Ready and the pods run, in words either way."""
    name = kept["pool"].split("/", 1)[1]
    nodes = await toolbox.call(
        "list_resources", kind="Node", label_selector=f"{POOL_LABEL}={name}", output="fields",
        fields=["status.conditions"], limit=1000,
    )  # fmt: skip
    new = [n for n in nodes.get("items", []) if str(n["name"]) not in kept["before"]]
    ready = sorted(str(n["name"]) for n in new if is_ready(n.get("status.conditions")))
    wanted = int(kept["applied"] or kept["to"]) - int(kept["from"])
    running = await _running(toolbox, kept["pods"])
    placed = [f"{p} runs on {node}" for p, node in running.items() if node]
    waits = [p for p, node in running.items() if node == ""]
    said = f"{len(ready)} of {wanted} new node(s) joined Ready ({', '.join(ready) or 'none yet'})"
    said += f"; {'; '.join(placed)}" if placed else ""
    said += f"; still waiting: {', '.join(waits)}" if waits else ""
    return len(ready) >= wanted and not waits, said


async def _running(toolbox: Toolbox, pods: list[str]) -> dict[str, str]:
    """Each pod's node once it runs there (or ran to its end), "" before; pods gone since are
    left out."""
    found = {}
    for key in pods:
        namespace, name = key.split("/", 1)
        try:
            got = await toolbox.call("get_resource", kind="pods", name=name, namespace=namespace,
                                     output="fields",
                                     fields=["spec.nodeName", "status.phase"])  # fmt: skip
        except ToolFailed as exc:
            if "not found" in exc.reason.lower():
                continue
            raise
        runs = got.get("status.phase") in ("Running", "Succeeded")
        found[key] = str(got.get("spec.nodeName") or "") if runs else ""
    return found


def _rejected_earlier(kept: dict[str, dict[str, Any]], room: Room) -> ScaleUp | None:
    """The pool's rejected scale-up, while the pool and its waiting pods are what it was judged
    on."""
    for proposal, record in kept.items():
        same = record["pool"] == room.pool.key and record["from"] == room.pool.replicas
        if same and record["status"] == "rejected" and set(room.pods) <= set(record["pods"]):
            shown = _shown(proposal, {**record, "pods": room.pods})
            reasons = "; ".join(proposals.remembered(record["decision"]).reasons)
            shown["steps"].append(
                f"rejected earlier (proposal {proposal}): {reasons}; not proposed again while "
                f"{room.pool.key} has {record['from']} machine(s) and only these pods wait"
            )
            return {**shown, "status": "rejected"}
    return None


def _shown(proposal: str, kept: dict[str, Any]) -> ScaleUp:
    return ScaleUp(
        pool=kept["pool"], pods=list(kept["pods"]), replicas_from=int(kept["from"]),
        replicas_to=int(kept["to"]), applied=kept["applied"], proposal=proposal,
        outcome=str(kept["decision"].get("outcome") or ""), approved_by=kept["approved_by"],
        status=kept["status"], steps=[],
    )  # fmt: skip
