"""The same patrol across several clusters: per-cluster node health and capacity, and the
imbalance between them answered with a proposal, never an act.

A cluster is a kubeconfig context of the one kube server (every kube tool takes `context`), so
one agent, one identity and one policy store look after the fleet. A cluster's load is the CPU
its pods request (running or waiting to be scheduled: a pending pod is demand the cluster could
not place) over the CPU its nodes offer. One at or above `SATURATED` next to one at or below
`ROOM` is an imbalance: the saturated cluster's largest Deployment (by CPU requested) is
proposed to move some replicas, as many as the other can take while staying under `SATURATED`
and at most half of them, through the policy store (`propose` scale down here, the move in the
rationale); the owners and people decide, and a move is proposed once (remembered in the store).

A decided move is carried out as paired changes, each resumable from the store (`carry_on`,
once per fleet run): first the same Deployment in the target cluster scaled up by the replicas
moving, under a proposal of its own there, and validated (its rollout done); only then the
source scaled down under the approved proposal, and validated. So the replicas are never fewer
than before at any moment. A target without that Deployment gets nothing: the move waits and
says so (deploying a workload into another cluster is its owners' change, by their GitOps).
Left out: moves by pull request where git defines the workloads (the scales are gated API
writes here), and moving anything but a Deployment.
"""

from __future__ import annotations

import math
from typing import Any, Literal, TypedDict, cast

from langgraph.store.base import BaseStore

from agents.cluster_operator import nodes, proposals
from agents.cluster_operator.capacity import SYSTEM, millicores, requests
from agents.cluster_operator.migration import rolled_out
from agents.runtime.errors import ToolFailed
from agents.runtime.toolbox import Toolbox

SATURATED, ROOM = 0.8, 0.5
SPACE = ("cluster_operator", "moves")
POD_FIELDS = [
    "metadata.namespace", "metadata.name", "metadata.ownerReferences", "spec.containers",
    "spec.nodeName", "status.phase",
]  # fmt: skip
DEPLOY_FIELDS = [
    "metadata.name",
    "metadata.namespace",
    "spec.replicas",
    "spec.template.spec.containers",
]


class ClusterHealth(TypedDict):
    cluster: str  # the kubeconfig context
    nodes: int
    unhealthy: list[str]  # "node-2: Ready=False (...)"
    cpu_offered_m: float  # allocatable, schedulable nodes
    cpu_requested_m: float
    pending: int  # pods not yet scheduled
    load: float  # requested / offered


MoveState = Literal["proposed", "scaled-up", "done", "rejected", "no-target"]


class Move(TypedDict):
    workload: str  # Deployment/namespace/name in `source`
    source: str
    target: str
    replicas: int
    moving: int
    proposal: str
    outcome: str
    rationale: str
    state: MoveState
    target_proposal: str  # the scale-up's proposal in the target cluster
    target_replicas: list[int]  # the target's replicas before and after its scale-up, once made
    steps: list[str]


async def survey(toolbox: Toolbox, clusters: list[str]) -> list[ClusterHealth]:
    return [await _health(toolbox, cluster) for cluster in clusters]


async def _health(toolbox: Toolbox, cluster: str) -> ClusterHealth:
    listed = await toolbox.call(
        "list_resources", kind="Node", output="fields", context=cluster or None,
        fields=["metadata.name", "spec.unschedulable", "status.conditions", "status.allocatable"],
    )  # fmt: skip
    offered, unhealthy, count = 0.0, [], 0
    for item in listed.get("items", []):
        count += 1
        bad = [c for c in item.get("status.conditions") or [] if nodes.failing(c)]
        if bad:
            unhealthy.append(f"{item['metadata.name']}: {'; '.join(nodes.said(c) for c in bad)}")
        elif not item.get("spec.unschedulable"):
            offered += millicores(str((item.get("status.allocatable") or {}).get("cpu", "0")))
    pods = await toolbox.call(
        "list_resources", kind="pods", output="fields", fields=POD_FIELDS, limit=5000,
        context=cluster or None,
    )  # fmt: skip
    requested, pending = 0.0, 0
    for pod in pods.get("items", []):
        if pod.get("status.phase") not in ("Pending", "Running"):
            continue
        pending += not pod.get("spec.nodeName")  # Pending and bound is merely starting
        requested += requests(pod.get("spec.containers") or [])[0]
    return ClusterHealth(
        cluster=cluster, nodes=count, unhealthy=unhealthy, cpu_offered_m=offered,
        cpu_requested_m=requested, pending=pending,
        load=round(requested / offered, 3) if offered else 1.0,
    )  # fmt: skip


def imbalance(health: list[ClusterHealth]) -> tuple[ClusterHealth, ClusterHealth] | None:
    """The most loaded saturated cluster and the least loaded one with room, if both exist."""
    if len(health) < 2:
        return None
    ranked = sorted(health, key=lambda h: h["load"])
    roomy, busy = ranked[0], ranked[-1]
    return (busy, roomy) if busy["load"] >= SATURATED and roomy["load"] <= ROOM else None


async def balance(toolbox: Toolbox, store: BaseStore, health: list[ClusterHealth]) -> list[Move]:
    pair = imbalance(health)
    if pair is None:
        return []
    busy, roomy = pair
    largest = await _largest(toolbox, busy["cluster"])
    if largest is None:
        return []
    workload, replicas, cpu = largest
    space = roomy["cpu_offered_m"] * SATURATED - roomy["cpu_requested_m"]
    moving = min(max(1, replicas // 2), math.floor(space / cpu) if cpu else 0)
    if moving < 1:
        return []
    key = f"{busy['cluster']}/{workload}"
    kept = await store.aget(SPACE, key)
    if kept is not None:
        return [await carry_on(toolbox, store, key, {**_fresh(), **kept.value})]
    _, namespace, name = workload.split("/", 2)
    why = (
        f"Move {moving} of {replicas} replicas of {workload} from cluster {busy['cluster']} "
        f"(CPU requests at {busy['load']:.0%} of what its nodes offer, {busy['pending']} pod(s) "
        f"pending) to cluster {roomy['cluster']} (at {roomy['load']:.0%}): scale it up by "
        f"{moving} in {roomy['cluster']} first, then down to {replicas - moving} here."
    )
    record = await toolbox.call(
        "propose", action="scale", target=f"deployment/{name}", namespace=namespace,
        from_replicas=replicas, replicas=replicas - moving, rationale=why, risk="medium",
        cluster=busy["cluster"],
        metrics={"cluster_cpu_load": busy["load"], "target_cluster_cpu_load": roomy["load"]},
    )  # fmt: skip
    decided = proposals.decided(record)
    move = Move(
        workload=workload, source=busy["cluster"], target=roomy["cluster"], replicas=replicas,
        moving=moving, proposal=decided.proposal, outcome=decided.outcome or "escalated",
        rationale=why, state="proposed", target_proposal="", target_replicas=[], steps=[],
    )  # fmt: skip
    await store.aput(SPACE, key, dict(move))
    return [await carry_on(toolbox, store, key, dict(move))]


def _fresh() -> dict[str, Any]:
    """A move remembered before moves were carried out: where it starts."""
    return {"state": "proposed", "target_proposal": "", "target_replicas": [], "steps": []}


async def carry_on(toolbox: Toolbox, store: BaseStore, key: str, kept: dict[str, Any]) -> Move:
    """The move taken as far as it may go now: its decision taken up, then the target scaled
    up and validated, then the source scaled down and validated."""
    move = cast(Move, kept)
    move["steps"] = []
    if move["state"] in ("done", "rejected"):
        return move
    _, namespace, name = move["workload"].split("/", 2)
    decision = await proposals.current(toolbox, move["proposal"], waiter=f"move {key}")
    move["outcome"] = decision.outcome or move["outcome"]
    if decision.outcome == "rejected":
        move["state"] = "rejected"
        move["steps"].append(f"the move was rejected: {'; '.join(decision.reasons)}")
    elif not decision.approved:
        move["steps"].append("the move waits for its decision")
    elif move["state"] in ("proposed", "no-target"):
        await _scale_up(toolbox, move, namespace, name, decision)
    if move["state"] == "scaled-up":
        to = move["replicas"] - move["moving"]
        await toolbox.call(
            "scale", kind="deployment", name=name, namespace=namespace, replicas=to,
            context=move["source"], proposal=move["proposal"],
        )  # fmt: skip
        done = await _rolled_out(toolbox, name, namespace, move["source"])
        move["steps"].append(
            f"cluster {move['source']}: {move['workload']} {move['replicas']} -> {to} replicas "
            f"under proposal {move['proposal']}; rollout: {done}"
        )
        move["state"] = "done"
    await store.aput(SPACE, key, {**move, "steps": []})
    return move


async def _scale_up(
    toolbox: Toolbox, move: Move, namespace: str, name: str, decision: proposals.Decided
) -> None:
    """The target's side: the same Deployment scaled up by the replicas moving, validated."""
    try:
        there = await toolbox.call("get_resource", kind="deployment", name=name,
                                   namespace=namespace, output="fields",
                                   fields=["spec.replicas"], context=move["target"])  # fmt: skip
    except ToolFailed:
        move["state"] = "no-target"
        move["steps"].append(
            f"cluster {move['target']} has no Deployment {namespace}/{name}: nothing moved; "
            "deploy it there (its owners' change), and the next fleet run carries the move on"
        )
        return
    before = int(there.get("spec.replicas") or 0)
    after = before + move["moving"]
    if not move["target_proposal"]:
        record = await toolbox.call(
            "propose", action="scale", target=f"deployment/{name}", namespace=namespace,
            from_replicas=before, replicas=after, risk="low",
            cluster=move["target"],
            rationale=f"The target side of proposal {decision.proposal}: " + move["rationale"],
        )  # fmt: skip
        move["target_proposal"] = str(record["proposal"])
    waiter = f"move-up {move['target']}/{move['workload']}"
    up = await proposals.current(toolbox, move["target_proposal"], waiter=waiter)
    if not up.approved:
        move["steps"].append(f"the scale-up in {move['target']} is {up.outcome or 'undecided'}")
        return
    await toolbox.call("scale", kind="deployment", name=name, namespace=namespace,
                       replicas=after, context=move["target"],
                       proposal=move["target_proposal"])  # fmt: skip
    move["target_replicas"] = [before, after]
    done = await _rolled_out(toolbox, name, namespace, move["target"])
    move["steps"].append(
        f"cluster {move['target']}: {move['workload']} {before} -> {after} replicas under "
        f"proposal {move['target_proposal']}; rollout: {done}"
    )
    if done == "done":
        move["state"] = "scaled-up"


async def _rolled_out(toolbox: Toolbox, name: str, namespace: str, context: str) -> str:
    """ "done", or what the rollout still waits for after a minute of looking."""
    status = await rolled_out(toolbox, name, namespace, context=context)
    return "done" if status.get("done") else str(status.get("message") or "not done")


async def _largest(toolbox: Toolbox, cluster: str) -> tuple[str, int, float] | None:
    """The Deployment requesting the most CPU in `cluster`: its name, replicas, CPU per replica."""
    listed = await toolbox.call(
        "list_resources", kind="deployments", output="fields", fields=DEPLOY_FIELDS, limit=500,
        context=cluster or None,
    )  # fmt: skip
    best: tuple[float, str, int, float] | None = None
    for item in listed.get("items", []):
        namespace, replicas = str(item["metadata.namespace"]), int(item.get("spec.replicas") or 0)
        cpu = requests(item.get("spec.template.spec.containers") or [])[0]
        if namespace in SYSTEM or replicas < 2 or cpu <= 0:
            continue
        name = f"Deployment/{namespace}/{item['metadata.name']}"
        if best is None or cpu * replicas > best[0]:
            best = (cpu * replicas, name, replicas, cpu)
    return None if best is None else best[1:]
