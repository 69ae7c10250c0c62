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

Each side is written the way a person's change there would be (`_way`): in the cluster the
crew's GitOps repository syncs to (`git_home`), a Deployment git defines is scaled by a pull
request editing its replicas, merged under the side's proposal and synced after a dry run, so
the sync never undoes the move; a Deployment no git defines is scaled by the kube gate's write.
A Deployment another repository manages (its `kubecrew.io/gitops-repo` label) in a cluster the
crew's repository does not reach is never written directly: the move waits there and says which
repository to give the crew. Left out: moving anything but a Deployment.
"""

from __future__ import annotations

import math
from typing import Any, Literal, TypedDict, cast

from langgraph.store.base import BaseStore

from agents.cluster_operator import nodes, proposals
from agents.cluster_operator.capacity import SYSTEM, millicores, requests, write
from agents.cluster_operator.migration import rolled_out
from agents.runtime.errors import ToolFailed
from agents.runtime.loop.mutation import managed_manifest
from agents.runtime.loop.state import Target
from agents.runtime.toolbox import Toolbox

SATURATED, ROOM = 0.8, 0.5
SPACE = ("cluster_operator", "moves")
REPO_LABEL = "kubecrew.io/gitops-repo"  # what the gitops server stamps on what it applies
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
    ways: dict[str, str]  # cluster -> how its side was written ("PR #3, merged and synced")
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


async def balance(
    toolbox: Toolbox, store: BaseStore, health: list[ClusterHealth], *, git_home: str | None = None
) -> list[Move]:
    """The imbalance's move proposed once, then carried on as far as its decisions let it go;
    `git_home` is the cluster the crew's GitOps repository syncs to (None: no repository)."""
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
        return [await carry_on(toolbox, store, key, {**_fresh(), **kept.value}, git_home)]
    _, namespace, name = workload.split("/", 2)
    why = (
        f"Move {moving} of {replicas} replicas of {workload} from cluster {busy['cluster']} "
        f"(CPU requests at {busy['load']:.0%} of what its nodes offer, {busy['pending']} pod(s) "
        f"pending) to cluster {roomy['cluster']} (at {roomy['load']:.0%}): scale it up by "
        f"{moving} in {roomy['cluster']} first, then down to {replicas - moving} here."
    )
    way = await _way(toolbox, busy["cluster"], namespace, name, git_home)
    record = await toolbox.call(
        "propose", action="scale", target=f"deployment/{name}", namespace=namespace,
        from_replicas=replicas, replicas=replicas - moving, rationale=why, risk="medium",
        cluster=busy["cluster"], via="pull-request" if way == "pull-request" else "direct",
        metrics={"cluster_cpu_load": busy["load"], "target_cluster_cpu_load": roomy["load"]},
    )  # fmt: skip
    decided = proposals.decided(record)
    move = Move(
        workload=workload, source=busy["cluster"], target=roomy["cluster"], replicas=replicas,
        moving=moving, proposal=decided.proposal, outcome=decided.outcome or "escalated",
        rationale=why, state="proposed", target_proposal="", target_replicas=[], ways={},
        steps=[],
    )  # fmt: skip
    await store.aput(SPACE, key, dict(move))
    return [await carry_on(toolbox, store, key, dict(move), git_home)]


def _fresh() -> dict[str, Any]:
    """A move remembered before moves were carried out: where it starts."""
    return {"state": "proposed", "target_proposal": "", "target_replicas": [], "ways": {},
            "steps": []}  # fmt: skip


async def carry_on(
    toolbox: Toolbox, store: BaseStore, key: str, kept: dict[str, Any], git_home: str | None = None
) -> Move:
    """The move taken as far as it may go now: its decision taken up, then the target scaled
    up and validated, then the source scaled down and validated, each side the way its
    cluster takes changes (`_way`)."""
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
        await _scale_up(toolbox, move, namespace, name, decision, git_home)
    if move["state"] == "scaled-up":
        to = move["replicas"] - move["moving"]
        side = (move["source"], namespace, name, move["replicas"], to, move["proposal"])
        if await _scale(toolbox, move, side, git_home):
            done = await _rolled_out(toolbox, name, namespace, move["source"])
            move["steps"].append(
                f"cluster {move['source']}: {move['workload']} {move['replicas']} -> {to} "
                f"replicas under proposal {move['proposal']}; rollout: {done}"
            )
            move["state"] = "done"
    await store.aput(SPACE, key, {**move, "steps": []})
    return move


async def _scale_up(
    toolbox: Toolbox,
    move: Move,
    namespace: str,
    name: str,
    decision: proposals.Decided,
    git_home: str | None,
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
        way = await _way(toolbox, move["target"], namespace, name, git_home)
        record = await toolbox.call(
            "propose", action="scale", target=f"deployment/{name}", namespace=namespace,
            from_replicas=before, replicas=after, risk="low", cluster=move["target"],
            via="pull-request" if way == "pull-request" else "direct",
            rationale=f"The target side of proposal {decision.proposal}: " + move["rationale"],
        )  # fmt: skip
        move["target_proposal"] = str(record["proposal"])
    waiter = f"move-up {move['target']}/{move['workload']}"
    up = await proposals.current(toolbox, move["target_proposal"], waiter=waiter)
    if not up.approved:
        move["steps"].append(f"the scale-up in {move['target']} is {up.outcome or 'undecided'}")
        return
    side = (move["target"], namespace, name, before, after, move["target_proposal"])
    if not await _scale(toolbox, move, side, git_home):
        return
    move["target_replicas"] = [before, after]
    done = await _rolled_out(toolbox, name, namespace, move["target"])
    move["steps"].append(
        f"cluster {move['target']}: {move['workload']} {before} -> {after} replicas under "
        f"proposal {move['target_proposal']}; rollout: {done}"
    )
    if done == "done":
        move["state"] = "scaled-up"


async def _way(
    toolbox: Toolbox, cluster: str, namespace: str, name: str, git_home: str | None
) -> str:
    """How the Deployment's replicas change in `cluster`: "pull-request" where the crew's
    repository (syncing to `git_home`) defines it, "direct" where no repository manages it,
    else why the crew may not change it there."""
    target = Target(kind="Deployment", name=name, namespace=namespace)
    if cluster == git_home and await managed_manifest(toolbox, target):
        return "pull-request"
    try:
        labels = (await toolbox.call(
            "get_resource", kind="deployment", name=name, namespace=namespace, output="fields",
            fields=["metadata.labels"], context=cluster or None,
        )).get("metadata.labels") or {}  # fmt: skip
    except ToolFailed:
        return "direct"  # nothing there yet: the side says so when it reads it
    repo = labels.get(REPO_LABEL)
    if not repo:
        return "direct"
    return (
        f"repository {repo} defines it in cluster {cluster}, and the crew's GitOps repository "
        f"does not sync there: the move waits; give the crew {repo} for {cluster}"
    )


async def _scale(
    toolbox: Toolbox, move: Move, side: tuple[str, str, str, int, int, str], git_home: str | None
) -> bool:
    """One side of the move written its cluster's way; False (and why, in the steps) when
    it may not be."""
    cluster, namespace, name, before, after, proposal = side
    way = await _way(toolbox, cluster, namespace, name, git_home)
    if way == "direct":
        await toolbox.call("scale", kind="deployment", name=name, namespace=namespace,
                           replicas=after, context=cluster or None, proposal=proposal)  # fmt: skip
        move["ways"][cluster] = "gated write (scale)"
        return True
    if way != "pull-request":
        move["steps"].append(f"cluster {cluster}: {way}")
        return False
    how, made = await write(
        toolbox, namespace, name, proposal=proposal,
        edits=[{"path": "spec.replicas", "value": after}],
        title=f"Scale {namespace}/{name} {before} -> {after} in cluster {cluster} (a fleet move)",
        direct=("scale", {}),
    )  # fmt: skip
    move["ways"][cluster] = how
    move["steps"] += [f"cluster {cluster} (git): {step}" for step in made]
    return True


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
