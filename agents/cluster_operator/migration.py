"""Moving workloads off a degrading node, by intent: the `migrate-off-node` skill as tool calls.

One call of `migrate` (a failing node) or `move_off` (any reason: planned maintenance too)
takes a node as far as it may go now and says where it stopped:
cordon -> drain plan -> the eviction intent (a drain Proposal the owners' policies answer,
recorded once and remembered across patrols in the agent's store) -> wait while a person must
decide (its answer taken up once, `proposals.settle`) or a training Job has not checkpointed
since the intent, unless policy allows evicting it and the intent gave that notice -> the
blast-radius check with
this hour's evictions -> the gated `drain` carrying the proposal id -> validation. A patrol that
finds the node still waiting calls it again and it carries on from the remembered intent; no
step repeats a write (cordon is skipped once cordoned, the proposal is made once, the gate lets
the proposal carry one drain).

The drain tool evicts a whole node's pods through the Eviction API, so the training wait holds
every eviction of the node: the kube server has no per-pod eviction tool to move the services
first. The kube server's gate does not re-judge a call carried by a proposal, so the blast
radius is judged here, just before the drain, with `evaluate_action` and a fresh count.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, TypedDict

import anyio
from langgraph.store.base import BaseStore

from agents.cluster_operator import proposals
from agents.cluster_operator.clock import cluster_now
from agents.cluster_operator.nodes import NodeIssue
from agents.cluster_operator.training import (
    TrainingPod,
    allowed_mid_run,
    checkpointed,
    training_pods,
)
from agents.runtime.toolbox import Toolbox

Status = Literal[
    "drained", "waiting-for-approval", "waiting-for-checkpoint", "rejected", "paused", "blocked"
]
SPACE = ("cluster_operator", "migrations")
BLAST_RULE = "max-evictions-per-hour"
DRAIN_SECONDS = 120
LOOKS, PAUSE = 60, 1.0  # validation looks at a rollout for up to a minute
_PODS = re.compile(r"\((\d+) pods\)")
_MOVABLE = ("Deployment/", "StatefulSet/")


class Migration(TypedDict):
    node: str
    status: Status
    proposal: str
    pods: list[str]  # the pods the plan evicts
    training: list[TrainingPod]
    budgets: list[dict[str, Any]]  # the plan's PodDisruptionBudgets
    evicted: list[str]
    replacements: list[dict[str, Any]]
    unhealthy: list[str]  # validation: findings about moved workloads, empty when healthy
    steps: list[str]  # what was done and seen, in order, for the narration


async def migrate(
    toolbox: Toolbox, store: BaseStore, issue: NodeIssue, *, also: Sequence[str] = ()
) -> Migration:
    """A node whose conditions say it is failing, moved off now (no window waits for a fault);
    `also`: the node's queued maintenance reasons, done in the same single disruption."""
    said = "; ".join(issue["conditions"])
    because = f"it reports {said}" + (
        f", and for its queued maintenance ({'; '.join(also)})" if also else ""
    )
    return await move_off(
        toolbox, store, issue["node"], cordoned=issue["cordoned"], because=because,
        first=f"node {issue['node']} is unhealthy: {said}",
    )  # fmt: skip


async def move_off(
    toolbox: Toolbox, store: BaseStore, node: str, *, cordoned: bool, because: str, first: str
) -> Migration:
    """Take `node` as far as it may go now, for the reason `because` (said in the intent)."""
    steps: list[str] = [first]
    if not cordoned:
        await toolbox.call("cordon", node=node)
        steps.append(f"cordoned {node}: nothing new is scheduled there")
    plan = await toolbox.call("drain_plan", node=node)
    pods = [p["pod"] for p in plan["pods"] if p["action"] == "evict"]
    found = _migration(node, pods, plan, steps)
    steps.append(_plan_line(plan, pods))
    if not pods:
        await store.adelete(SPACE, node)
        return await _validated(toolbox, found, [])
    found["training"] = await training_pods(toolbox, pods)
    at = await cluster_now(toolbox)
    allowed = {t["pod"]: await allowed_mid_run(toolbox, t, at=at) for t in found["training"]}
    intent = await _intent(toolbox, store, node, plan, pods, because, found, allowed)
    decided = await _settled(toolbox, store, node, intent)
    if not decided.approved:
        if decided.outcome == "rejected":
            await store.adelete(SPACE, node)  # a later patrol may propose again
            reasons = "; ".join(decided.reasons)
            if BLAST_RULE in reasons:  # the hour's evictions, not the owners, say no: later
                steps.append(f"paused: {reasons}; the next patrol proposes again")
                return {**found, "status": "paused"}
            steps.append(f"the owners rejected the drain: {reasons}")
            return {**found, "status": "rejected"}
        steps.append(f"waiting for a person to decide the drain (approval {decided.approval})")
        return {**found, "status": "waiting-for-approval"}
    steps.append(f"the drain is approved: {decided.text}")
    if _training_waits(found, intent, allowed):
        return {**found, "status": "waiting-for-checkpoint"}
    over = await _blast_radius(toolbox, node, len(pods))
    if over:
        steps.append(f"paused: {over}; the next patrol carries on when the hour allows")
        return {**found, "status": "paused"}
    drained = await toolbox.call(
        "drain", node=node, proposal=intent["proposal"], timeout_seconds=DRAIN_SECONDS
    )
    found["evicted"] = [e["pod"] for e in drained.get("evicted", [])]
    found["replacements"] = list(drained.get("replacements", []))
    steps.append(f"evicted {len(found['evicted'])} pod(s) under proposal {intent['proposal']}")
    if not drained.get("complete"):
        blocked = [f"{b['pod']} ({b.get('pdb') or b.get('reason')})" for b in drained["blocked"]]
        steps.append(f"blocked by budgets: {', '.join(blocked)}; the node stays cordoned")
        return {**found, "status": "blocked"}
    await store.adelete(SPACE, node)
    workloads = sorted({p["workload"] for p in plan["pods"] if p["action"] == "evict"})
    return await _validated(toolbox, found, workloads)


def _training_waits(found: Migration, intent: dict[str, Any], allowed: dict[str, str]) -> bool:
    """Whether a training Job holds the drain (said in the steps), or which go mid-run."""
    since, noticed = datetime.fromisoformat(intent["since"]), set(intent.get("notice", []))
    held, preempted = [], []
    for pod in found["training"]:
        if checkpointed(pod, since):
            continue
        if pod["pod"] in noticed and allowed.get(pod["pod"]):
            preempted.append(f"{pod['job'] or pod['pod']} ({allowed[pod['pod']]} allows it)")
        else:
            held.append(pod["job"] or pod["pod"])
    if held:
        found["steps"].append(
            f"waiting for training Job {', '.join(held)} to checkpoint (kubecrew.io/"
            f"checkpointed-at after {intent['since']}): not evicted mid-run"
        )
    elif preempted:
        found["steps"].append(
            f"evicting training work mid-run, as policy allows and as the intent "
            f"{intent['proposal']} gave notice: {', '.join(preempted)}"
        )
    return bool(held)


async def _settled(
    toolbox: Toolbox, store: BaseStore, node: str, intent: dict[str, Any]
) -> proposals.Decided:
    """The drain's decision; a person's answer taken up once, and remembered."""
    kept = proposals.remembered(intent["decision"])
    decided = await proposals.settle(toolbox, kept, waiter=f"migration {node}")
    if decided != kept:
        await store.aput(SPACE, node, {**intent, "decision": proposals.remember(decided)})
    return decided


def _migration(node: str, pods: list[str], plan: dict[str, Any], steps: list[str]) -> Migration:
    return Migration(
        node=node, status="drained", proposal="", pods=pods, training=[],
        budgets=list(plan.get("budgets", [])), evicted=[], replacements=[], unhealthy=[],
        steps=steps,
    )  # fmt: skip


def _plan_line(plan: dict[str, Any], pods: list[str]) -> str:
    budgets = [f"{b['pdb']} allows {b['disruptions_allowed']}" for b in plan.get("budgets", [])]
    line = f"drain plan: {len(pods)} pod(s) to evict in {len(plan.get('order', []))} wave(s)"
    return line + (f"; budgets: {', '.join(budgets)}" if budgets else "")


async def _intent(
    toolbox: Toolbox,
    store: BaseStore,
    node: str,
    plan: dict[str, Any],
    pods: list[str],
    because: str,
    found: Migration,
    allowed: dict[str, str],
) -> dict[str, Any]:
    """The remembered eviction intent for the node, or a new one proposed now."""
    kept = await store.aget(SPACE, node)
    if kept is not None:
        found["proposal"] = str(kept.value["proposal"])
        return dict(kept.value)
    since = datetime.now(UTC)
    used = await evictions_last_hour(toolbox, now=since)
    record = await toolbox.call(
        "propose",
        action="drain",
        target=f"node/{node}",
        pods=len(pods),
        metrics={"evictions_last_hour": float(used)},
        rationale=rationale(node, because, plan, found["training"], allowed),
        risk="medium",
    )
    intent: dict[str, Any] = {
        "proposal": str(record["proposal"]),
        "since": since.isoformat(),
        "pods": pods,
        "notice": sorted(pod for pod, why in allowed.items() if why),
        "decision": proposals.remember(proposals.decided(record)),
    }
    await store.aput(SPACE, node, intent)
    found["proposal"] = str(record["proposal"])
    found["steps"].append(
        f"told the owners: eviction intent recorded as proposal {record['proposal']}"
    )
    return intent


def rationale(
    node: str,
    because: str,
    plan: dict[str, Any],
    training: list[TrainingPod],
    allowed: dict[str, str] | None = None,
) -> str:
    lines = [
        f"I intend to evict these pods from node {node} because {because}. The node is "
        "cordoned; the pods move elsewhere through the Eviction API, never breaking a "
        "PodDisruptionBudget.",
    ]
    for move in plan["pods"]:
        if move["action"] == "evict":
            pdb = f", budget {move['pdb']}" if move.get("pdb") else ""
            lines.append(f"- {move['pod']} ({move.get('workload') or 'no controller'}{pdb})")
    for pod in training:
        why = (allowed or {}).get(pod["pod"])
        if why:
            lines.append(
                f"Notice: training pod {pod['pod']} will be evicted mid-run, before its Job "
                f"checkpoints, as {why} allows; checkpoint now if you can."
            )
        else:
            lines.append(f"Training pod {pod['pod']} waits until its Job checkpoints.")
    return "\n".join(lines)


async def evictions_last_hour(toolbox: Toolbox, *, now: datetime) -> int:
    """Pods evicted by applied drains in the last hour, as the audit log records them."""
    since, after, total = now - timedelta(hours=1), 0, 0
    while True:
        page = await toolbox.call("audit_query", kind="mutation", after=after, limit=200)
        for record in page.get("records", []):
            applied = record["result"] == "applied" and record["summary"].startswith("drain:")
            if applied and datetime.fromisoformat(record["at"]) >= since:
                counted = _PODS.search(record["summary"])
                total += int(counted.group(1)) if counted else 0
        if not page.get("records") or page["next_after"] == after:
            return total
        after = int(page["next_after"])


async def _blast_radius(toolbox: Toolbox, node: str, pods: int) -> str:
    """Why draining `pods` now would exceed the blast radius; "" when it would not."""
    used = await evictions_last_hour(toolbox, now=datetime.now(UTC))
    judged = await toolbox.call(
        "evaluate_action",
        action="drain",
        target=f"node/{node}",
        pods=pods,
        metrics={"evictions_last_hour": float(used)},
    )
    over = [
        f"{f['citation']}: {f['why']}"
        for f in judged.get("fired", [])
        if f["citation"].endswith(BLAST_RULE) and f["effect"] == "reject"
    ]
    return "; ".join(over)


async def _validated(toolbox: Toolbox, found: Migration, workloads: list[str]) -> Migration:
    """Every moved Deployment rolled out again (looked at for up to a minute: replacements take
    their time to start) and every moved Deployment or StatefulSet free of findings."""
    unhealthy: list[str] = []
    for workload in workloads:
        if not workload.startswith(_MOVABLE):
            continue
        kind, namespace, name = workload.split("/", 2)
        if kind == "Deployment":
            status = await rolled_out(toolbox, name, namespace)
            if not status.get("done"):
                unhealthy.append(f"{workload}: {status.get('message', 'rollout not done')}")
        diagnosis = await toolbox.call(
            "diagnose", namespace=namespace, kind=kind.lower(), name=name
        )
        unhealthy += [
            f"{workload}: {f['code']}: {f['summary']}"
            for f in diagnosis.get("findings", [])
            if f["ref"].get("kind") != "Node"
        ]
    found["unhealthy"] = unhealthy
    verdict = "healthy elsewhere" if not unhealthy else "NOT healthy: " + "; ".join(unhealthy)
    found["steps"].append(f"validated {len(workloads)} workload(s): {verdict}")
    return {**found, "status": "drained"}


async def rolled_out(
    toolbox: Toolbox, name: str, namespace: str, *, context: str | None = None
) -> dict[str, Any]:
    """The Deployment's rollout status once done, else as last seen after `LOOKS` looks;
    `context`: in that cluster of a fleet."""
    status: dict[str, Any] = {}
    where = {"context": context} if context else {}
    for _ in range(LOOKS):
        status = await toolbox.call("rollout_status", name=name, namespace=namespace, **where)
        if status.get("done"):
            break
        await anyio.sleep(PAUSE)
    return status
