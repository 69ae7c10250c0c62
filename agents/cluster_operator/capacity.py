"""The capacity review: underused workloads, their estimated saving, and the downscale proposed
through the policy store and applied only as decided (the `find-savings` skill as tool calls).

Utilization is CPU in use (`top`, metrics.k8s.io) over CPU requested, per Deployment; a
workload under `UNDERUSED` of its requests is underused, and the proposal is the replica count
that would run it at `TARGET` of its requests, at least one. A downscale the owners' policies
would counter back to the replicas it has (a CapacityPolicy minimum; `evaluate_action`, a dry
run) is not proposed: that workload's waste is in its requests, which `rightsizing` proposes.
The saving prices the removed replicas' requests at list prices per vCPU and GiB month
(`PRICES`), an estimate for ranking and for the owners to weigh, not a bill.

A proposal is made once per workload and remembered, with its decision, in the agent's store:
a review that finds it escalated takes up the person's answer (`claim_approval`, exactly once)
and applies it once granted; the kube gate lets the proposal carry exactly the decided scale,
once.
"""

from __future__ import annotations

import math
from typing import Any, TypedDict

from langgraph.store.base import BaseStore

from agents.cluster_operator import proposals
from agents.runtime.toolbox import Toolbox

UNDERUSED, TARGET = 0.2, 0.6
PRICES = {"cpu": 25.0, "memory_gib": 3.5}  # USD per month: an on-demand list-price estimate
SPACE = ("cluster_operator", "savings")
SYSTEM = frozenset({"kube-system", "kube-public", "kube-node-lease"})
FIELDS = ["metadata.name", "metadata.namespace", "spec.replicas", "spec.template.spec.containers"]


class Saving(TypedDict):
    workload: str  # Deployment/namespace/name
    replicas: int
    proposed: int
    utilization: float  # CPU in use / CPU requested
    savings_per_month: float
    proposal: str
    outcome: str  # the decision: approved, approved-as-countered, rejected, escalated, ""
    applied: int | None  # the replica count scaled to, once applied
    steps: list[str]


async def underused(toolbox: Toolbox) -> list[Saving]:
    """Deployments using under UNDERUSED of the CPU they request, with the saving of fewer."""
    listed = await toolbox.call(
        "list_resources", kind="deployments", output="fields", fields=FIELDS, limit=200
    )
    found: list[Saving] = []
    for item in listed.get("items", []):
        namespace, name = str(item["metadata.namespace"]), str(item["metadata.name"])
        replicas = int(item.get("spec.replicas") or 0)
        cpu, memory = requests(item.get("spec.template.spec.containers") or [])
        if namespace in SYSTEM or replicas < 2 or cpu <= 0:
            continue
        used = await _cpu_in_use(toolbox, namespace, name)
        if used is None:
            continue
        utilization = used / (cpu * replicas)
        if utilization >= UNDERUSED:
            continue
        proposed = max(1, math.ceil(used / (cpu * TARGET)))
        if proposed >= replicas or await _kept(toolbox, namespace, name, replicas, proposed):
            continue
        saved = (replicas - proposed) * (cpu / 1000 * PRICES["cpu"] + memory * PRICES["memory_gib"])
        found.append(
            Saving(
                workload=f"Deployment/{namespace}/{name}", replicas=replicas, proposed=proposed,
                utilization=round(utilization, 3), savings_per_month=round(saved, 2),
                proposal="", outcome="", applied=None, steps=[],
            )
        )  # fmt: skip
    return sorted(found, key=lambda s: -s["savings_per_month"])


async def propose_and_apply(
    toolbox: Toolbox, store: BaseStore, saving: Saving, *, counters: str = "accept"
) -> Saving:
    """Propose the downscale (once), then apply exactly the decided action, once."""
    _, namespace, name = saving["workload"].split("/", 2)
    kept = await store.aget(SPACE, saving["workload"])
    steps = saving["steps"]
    if kept is not None:
        waiter = f"savings {saving['workload']}"
        decided = await proposals.settle(
            toolbox, proposals.remembered(kept.value["decision"]), waiter=waiter
        )
        saving = {
            **saving,
            "replicas": int(kept.value["replicas"]),
            "proposed": int(kept.value["proposed"]),
        }
        steps.append(f"proposal {decided.proposal} is {decided.outcome or 'undecided'}")
    else:
        record = await toolbox.call(
            "propose",
            action="scale",
            target=f"deployment/{name}",
            namespace=namespace,
            from_replicas=saving["replicas"],
            replicas=saving["proposed"],
            metrics={"cpu_utilization": saving["utilization"]},
            savings_per_month=saving["savings_per_month"],
            rationale=(
                f"{saving['workload']} uses {saving['utilization']:.0%} of the CPU it requests "
                f"over {saving['replicas']} replicas; {saving['proposed']} would run it at about "
                f"{TARGET:.0%}, saving about ${saving['savings_per_month']:.2f} a month"
            ),
            counters=counters,
        )
        decided = proposals.decided(record)
        await store.aput(
            SPACE,
            saving["workload"],
            {
                "proposal": decided.proposal,
                "replicas": saving["replicas"],
                "proposed": saving["proposed"],
                "decision": proposals.remember(decided),
            },
        )
        steps.append(
            f"proposed scale {saving['workload']} {saving['replicas']} -> {saving['proposed']} "
            f"as {decided.proposal}: {decided.outcome}"
        )
    saving = {**saving, "proposal": decided.proposal, "outcome": decided.outcome}
    if decided.outcome == "rejected":
        await store.adelete(SPACE, saving["workload"])
        steps.append(f"rejected: {'; '.join(decided.reasons)}; nothing changed")
        return saving
    if not decided.approved:
        steps.append(f"waiting for a person: approval {decided.approval}; nothing changed yet")
        return saving
    to = int((decided.action.get("replicas") or {}).get("to", saving["proposed"]))
    await toolbox.call(
        "scale", kind="deployment", name=name, namespace=namespace, replicas=to,
        proposal=decided.proposal,
    )  # fmt: skip
    await store.adelete(SPACE, saving["workload"])
    steps.append(f"scaled {saving['workload']} to {to} as decided ({decided.text})")
    return {**saving, "applied": to}


async def _kept(toolbox: Toolbox, namespace: str, name: str, replicas: int, to: int) -> bool:
    """Whether the owners' policies would counter `replicas -> to` with no fewer replicas."""
    judged = await toolbox.call(
        "evaluate_action", action="scale", target=f"deployment/{name}", namespace=namespace,
        from_replicas=replicas, replicas=to,
    )  # fmt: skip
    counter = (judged.get("counter") or {}).get("replicas")
    return isinstance(counter, int) and counter >= replicas


async def _cpu_in_use(toolbox: Toolbox, namespace: str, name: str) -> float | None:
    """Millicores the Deployment's pods use now, None without data."""
    pods = await pods_cpu(toolbox, namespace, name)
    return float(sum(pods)) if pods else None


async def pods_cpu(toolbox: Toolbox, namespace: str, name: str) -> list[float]:
    """Millicores each pod of the Deployment uses now (pods named `<name>-...`)."""
    top = await toolbox.call("top", what="pods", namespace=namespace, limit=200)
    rows = [r for r in top.get("items") or [] if str(r.get("name", "")).startswith(f"{name}-")]
    return [float(r.get("cpu_m") or 0) for r in rows]


def requests(containers: list[dict[str, Any]]) -> tuple[float, float]:
    """CPU (millicores) and memory (GiB) one replica requests."""
    cpu = memory = 0.0
    for container in containers:
        asked = (container.get("resources") or {}).get("requests") or {}
        cpu += millicores(str(asked.get("cpu", "0")))
        memory += gib(str(asked.get("memory", "0")))
    return cpu, memory


def millicores(text: str) -> float:
    return float(text[:-1]) if text.endswith("m") else float(text) * 1000


def gib(text: str) -> float:
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "K": 1e3, "M": 1e6, "G": 1e9}
    for suffix, factor in units.items():
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * factor / 2**30
    return float(text) / 2**30
