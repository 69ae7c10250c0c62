"""Right-sizing in the capacity review: a workload that cannot lose replicas gives back the CPU
its containers request and do not use, through the policy store, applied only as decided.

A Deployment the review did not propose to downscale (one replica, or replicas the owner's
policies keep) whose CPU in use per replica is under `UNDERUSED` of its request is oversized,
when a CostPolicy supports right-sizing it (`evaluate_action` on the intent, no values yet).
Use is read as the downscale reads it (`capacity.Meter`): the mean over the CostPolicy's window
from Prometheus when the metrics server has one, else `top`'s one sample. The new request is
sized from the PEAK per replica, not the mean: with Prometheus the busiest moment of any one
pod in the window (the metrics server's `cpu_peak`), so a request never
drops below what a replica needed in the window; from one sample, the sample itself. Each
container's share of it (the pod's use split by the containers' requests, since both sources
measure pods) sized to run at `TARGET`, rounded up to `STEP` millicores and never below
`FLOOR`, is its new CPU request. A windowed review that cannot read the peak proposes nothing
for that workload: a request sized from the mean would starve the next busy hour. Only CPU is
sized: memory must cover a spike a sample or a mean does not show, and too small a memory
request gets a pod evicted or killed, where too small a CPU request only slows it down.

One container per proposal, the one that saves most: the kube gate lets an approved proposal
carry one `set_resources` call, and the next review takes the next container. A decided resize
goes as a person's would (`capacity.write`): by pull request where git defines the Deployment
(the container's `resources.requests.cpu` edited in its manifest, merged and synced), else by
the gated `set_resources`. The saving is
priced like a downscale's (`prices.PRICES`). The proposal is remembered per workload in the
agent's store: an escalated one waits for the person's answer (`claim_approval`, once); a
rejected one is not proposed again while the container's request is the one it was for.
"""

from __future__ import annotations

import math
from typing import TypedDict

from langgraph.store.base import BaseStore

from agents.cluster_operator import proposals
from agents.cluster_operator.capacity import (
    SYSTEM,
    TARGET,
    UNDERUSED,
    Meter,
    Usage,
    approver,
    millicores,
    via,
    write,
)
from agents.runtime.prices import PRICES
from agents.runtime.toolbox import Toolbox

STEP, FLOOR = 10, 10  # millicores
SPACE = ("cluster_operator", "rightsizing")


class Resize(TypedDict):
    workload: str  # Deployment/namespace/name
    replicas: int
    container: str
    used_m: float  # the container's CPU in use per replica, millicores (the mean, or the sample)
    peak_m: float  # its CPU at the busiest replica's peak, millicores: what the request is sized by
    cpu_from: str  # its CPU request now
    cpu_to: str  # the request proposed
    utilization: float  # CPU in use / CPU requested, per replica
    source: str  # "over 1h from Prometheus (peak 40m)", or capacity.ONE_SAMPLE
    savings_per_month: float
    proposal: str
    outcome: str  # approved, approved-as-countered, rejected, escalated, ""
    applied: str  # the CPU request set, once applied
    how: str  # how it was applied: "PR #3, merged and synced", "gated write (set_resources)"
    approved_by: str  # who approved what was applied: the policy store, or a person
    steps: list[str]


async def oversized(
    toolbox: Toolbox, *, skip: frozenset[str], meter: Meter | None = None
) -> list[Resize]:
    """Deployments not in `skip` whose replicas use under UNDERUSED of the CPU they request,
    each with its container whose request shrinks the most (`meter`: the review's, shared with
    the downscales so each workload's use is read once)."""
    meter = meter or Meter(toolbox)
    found: list[Resize] = []
    for item in await meter.deployments():
        namespace, name = str(item["metadata.namespace"]), str(item["metadata.name"])
        workload = f"Deployment/{namespace}/{name}"
        replicas = int(item.get("spec.replicas") or 0)
        asked = _cpu_requests(item.get("spec.template.spec.containers") or [])
        total = sum(m for _, m in asked.values())
        if namespace in SYSTEM or workload in skip or replicas < 1 or total <= 0:
            continue
        use = await meter.use(namespace, name, replicas)
        if use is None or use.replicas < 1:
            continue
        per_replica = use.used_m / use.replicas
        if per_replica / total >= UNDERUSED:
            continue
        peak = _peak(use)
        if peak is None:
            continue
        resize = _largest(workload, replicas, asked, per_replica, *peak)
        if resize is not None and await _supported(toolbox, namespace, name, resize):
            found.append(resize)
    return sorted(found, key=lambda r: -r["savings_per_month"])


async def _supported(toolbox: Toolbox, namespace: str, name: str, resize: Resize) -> bool:
    """Whether a cost policy finds the workload underused and allows right-sizing it: a dry run
    of the intent (a resize without values), so requests are only proposed where the cluster's
    owners declared that saving, and a workload no CostPolicy covers is left alone."""
    judged = await toolbox.call(
        "evaluate_action", action="resize", target=f"deployment/{name}", namespace=namespace,
        metrics={"cpu_utilization": resize["utilization"]},
    )  # fmt: skip
    fired = judged.get("fired") or []
    return any(f.get("concern") == "cost" and f.get("effect") == "support" for f in fired)


def _peak(use: Usage) -> tuple[float, str] | None:
    """The most one replica used (millicores) and the source, peak said: the metrics server's
    `cpu_peak` over the window; from one sample, its share per replica. None when a window's
    peak is not known."""
    if not use.window:
        return use.used_m / use.replicas, use.source
    if use.peak_m is None:
        return None
    return use.peak_m, f"{use.source} (peak {use.peak_m:.0f}m)"


def _largest(
    workload: str,
    replicas: int,
    asked: dict[str, tuple[str, float]],
    per_replica: float,
    peak: float,
    source: str,
) -> Resize | None:
    """The container whose request shrinks most when sized from `peak` (per replica)."""
    total = sum(m for _, m in asked.values())
    best: Resize | None = None
    for container, (text, request) in asked.items():
        used, busiest = per_replica * request / total, peak * request / total
        to = max(FLOOR, math.ceil(busiest / TARGET / STEP) * STEP)
        if to >= request:
            continue
        saved = replicas * (request - to) / 1000 * PRICES["cpu"]
        if best is None or saved > best["savings_per_month"]:
            best = Resize(
                workload=workload, replicas=replicas, container=container,
                used_m=round(used, 1), peak_m=round(busiest, 1), cpu_from=text, cpu_to=f"{to}m",
                utilization=round(per_replica / total, 3), source=source,
                savings_per_month=round(saved, 2),
                proposal="", outcome="", applied="", how="", approved_by="", steps=[],
            )  # fmt: skip
    return best


def _cpu_requests(containers: list[dict[str, object]]) -> dict[str, tuple[str, float]]:
    """Each container's CPU request, as written and in millicores (containers asking none are
    left out: there is nothing to give back)."""
    out: dict[str, tuple[str, float]] = {}
    for container in containers:
        resources = container.get("resources")
        asked = (resources.get("requests") if isinstance(resources, dict) else None) or {}
        cpu = str(asked.get("cpu", "")) if isinstance(asked, dict) else ""
        if cpu and millicores(cpu) > 0:
            out[str(container.get("name"))] = (cpu, millicores(cpu))
    return out


async def propose_and_apply(
    toolbox: Toolbox, store: BaseStore, resize: Resize, *, counters: str = "accept"
) -> Resize:
    """Propose the resize (once), then set exactly the decided request, once."""
    _, namespace, name = resize["workload"].split("/", 2)
    kept = await store.aget(SPACE, resize["workload"])
    steps = resize["steps"]
    if kept is not None and kept.value["cpu_from"] != resize["cpu_from"]:
        kept = None  # the request changed since: judge the new one afresh
    if kept is not None:
        waiter = f"rightsizing {resize['workload']}"
        decided = await proposals.settle(
            toolbox, proposals.remembered(kept.value["decision"]), waiter=waiter
        )
        resize = {**resize, "container": kept.value["container"], "cpu_to": kept.value["cpu_to"]}
        steps.append(f"proposal {decided.proposal} is {decided.outcome or 'undecided'}")
    else:
        record = await toolbox.call(
            "propose",
            action="resize",
            target=f"deployment/{name}",
            namespace=namespace,
            via=await via(toolbox, namespace, name),
            resources=[
                {"container": resize["container"], "cpu": resize["cpu_to"]}
                | {"from_cpu": resize["cpu_from"]}
            ],
            metrics={"cpu_utilization": resize["utilization"]},
            savings_per_month=resize["savings_per_month"],
            rationale=(
                f"{resize['workload']} uses {resize['utilization']:.0%} of the CPU it requests "
                f"per replica ({resize['source']}); container {resize['container']} uses about "
                f"{resize['used_m']:.0f}m of its {resize['cpu_from']}{_at_most(resize)}, so "
                f"{resize['cpu_to']} runs it at about {TARGET:.0%}{_at_most(resize, 'at its peak')}"
                ", saving about "
                f"${resize['savings_per_month']:.2f} a month over {resize['replicas']} replicas"
            ),
            counters=counters,
        )
        decided = proposals.decided(record)
        steps.append(
            f"proposed resize {resize['workload']} {resize['container']} cpu "
            f"{resize['cpu_from']} -> {resize['cpu_to']} as {decided.proposal}: {decided.outcome}"
        )
    await store.aput(
        SPACE,
        resize["workload"],
        {
            "proposal": decided.proposal, "container": resize["container"],
            "cpu_from": resize["cpu_from"], "cpu_to": resize["cpu_to"],
            "decision": proposals.remember(decided),
        },
    )  # fmt: skip
    resize = {**resize, "proposal": decided.proposal, "outcome": decided.outcome}
    if decided.outcome == "rejected":
        steps.append(
            f"rejected: {'; '.join(decided.reasons)}; nothing changed, and it is not proposed "
            f"again while the request is {resize['cpu_from']}"
        )
        return resize
    if not decided.approved:
        steps.append(f"waiting for a person: approval {decided.approval}; nothing changed yet")
        return resize
    container, to = _decided_request(decided.action, resize)
    by = await approver(toolbox, decided.proposal)
    path = f"spec.template.spec.containers[name={container}].resources.requests.cpu"
    how, made = await write(
        toolbox, namespace, name, proposal=decided.proposal,
        edits=[{"path": path, "value": to}],
        title=f"Right-size Deployment {namespace}/{name}: {container} cpu request "
        f"{resize['cpu_from']} -> {to}",
        direct=("set_resources", {"kind": "deployment", "name": name, "namespace": namespace,
                                  "container": container, "cpu": to}),
    )  # fmt: skip
    steps.extend(made)
    await store.adelete(SPACE, resize["workload"])
    steps.append(
        f"set {resize['workload']} {container} cpu request {resize['cpu_from']} -> {to} by "
        f"{how}, under proposal {decided.proposal} approved by {by} ({decided.text})"
    )
    return {**resize, "container": container, "applied": to, "how": how, "approved_by": by}


def _at_most(resize: Resize, said: str = "") -> str:
    """The peak's part of a sentence, when the peak is not the use itself (one sample)."""
    if resize["peak_m"] == resize["used_m"]:
        return ""
    return f" {said}" if said else f", {resize['peak_m']:.0f}m at its peak"


def _decided_request(action: dict[str, object], resize: Resize) -> tuple[str, str]:
    """The container and CPU request the decision names (the proposed ones if it names none)."""
    changes = action.get("resources")
    if isinstance(changes, list) and changes and isinstance(changes[0], dict):
        cpu = (changes[0].get("requests") or {}).get("cpu") or {}
        return str(changes[0]["container"]), str(cpu.get("to", resize["cpu_to"]))
    return resize["container"], resize["cpu_to"]
