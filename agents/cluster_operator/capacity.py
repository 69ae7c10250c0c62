"""The capacity review: underused workloads, their estimated saving, and the downscale proposed
through the policy store and applied only as decided (the `find-savings` skill as tool calls).

Utilization is CPU in use over CPU requested, per Deployment; a workload under `UNDERUSED` of
its requests is underused, and the proposal is the replica count that would run it at `TARGET`
of its requests, at least one. Use is read by a `Meter`, one review long: with a Prometheus
behind the metrics server (`workload_utilization` answering from "prometheus") it is the MEAN
over the window of the CostPolicy that covers the workload (`underused.window`, what that policy
calls underused; `WINDOW` when none names one), so a workload idle now but busy an hour ago is
not cut to its quiet moment. Without one it is `top`'s single metrics.k8s.io sample, as the
deterministic tests and evals expect; the source is said in the rationale and the report.

A downscale the owners' policies would counter back to the replicas it has (a CapacityPolicy
minimum; `evaluate_action`, a dry run) is not proposed: that workload's waste is in its
requests, which `rightsizing` proposes.
The saving prices the removed replicas' requests at list prices per vCPU and GiB month
(`agents.runtime.prices`), an estimate for ranking and for the owners to weigh, not a bill.

A decided change goes the way a person's does (`write`): where git defines the Deployment (the
gitops server's `find_manifest`), a pull request with exactly that field edit, proposed via
pull-request, merged under the approved proposal and synced after a dry run, so the live object
stays what git says; otherwise the kube gate's write carrying the proposal. Each applied change
says how it was made (`how`: the PR, or the gated write) and who approved it (`approver`: the
policy store by policy, or the person who granted the request).

A proposal is made once per workload and remembered, with its decision, in the agent's store:
a review that finds it escalated takes up the person's answer (`claim_approval`, exactly once)
and applies it once granted; the kube gate lets the proposal carry exactly the decided scale,
once. A rejected downscale (by policy, or denied by a person or the org's arbiter) stays
remembered with the replicas and requests it was judged on: while the workload still runs those,
the review reports the rejection and proposes nothing, so a refusal is not asked again (and
escalated again, and denied again) at every review. A counter the rejection names ("propose
scale to 3") is the owners' to take up, never proposed on its own: what the agent proposes
stays what its numbers say.
"""

from __future__ import annotations

import math
import re
from typing import Any, NamedTuple, TypedDict

import yaml
from langgraph.store.base import BaseStore

from agents.cluster_operator import proposals
from agents.runtime.errors import ToolFailed
from agents.runtime.loop.mutation import managed_manifest, merge, open_pr, sync_change
from agents.runtime.loop.state import Target
from agents.runtime.prices import PRICES
from agents.runtime.toolbox import Toolbox
from core.policy.proposals import APPROVED

Json = dict[str, Any]
UNDERUSED, TARGET = 0.2, 0.6
SPACE = ("cluster_operator", "savings")
SYSTEM = frozenset({"kube-system", "kube-public", "kube-node-lease"})
PAGE = 500  # rows a read tool gives at most per call
FIELDS = ["metadata.name", "metadata.namespace", "spec.replicas", "spec.template.spec.containers"]
WINDOW = "1h"  # the window when no CostPolicy covering the workload names one
ONE_SAMPLE = "one sample from metrics.k8s.io"
_DURATION = re.compile(r"(\d+)([hms])")
_SECONDS = {"h": 3600, "m": 60, "s": 1}
LABEL = "kubecrew-capacity"  # the label of the review's pull requests


class Saving(TypedDict):
    workload: str  # Deployment/namespace/name
    replicas: int
    proposed: int
    utilization: float  # CPU in use / CPU requested
    source: str  # where the use was read: "mean over 1h from Prometheus", or ONE_SAMPLE
    savings_per_month: float
    requests: str  # what one replica requests, as written: "web: cpu 100m, memory 32Mi"
    proposal: str
    outcome: str  # the decision: approved, approved-as-countered, rejected, escalated, ""
    applied: int | None  # the replica count scaled to, once applied
    how: str  # how it was applied: "PR #3, merged and synced", "gated write (scale)"; "" if not
    approved_by: str  # who approved what was applied: the policy store, or a person
    steps: list[str]


class Usage(NamedTuple):
    """What a Deployment's replicas use, in millicores, and where that was read."""

    used_m: float  # all replicas together: the mean over `window`, or the one sample now
    replicas: int  # how many replicas it is shared by
    window: str  # the Prometheus window it is the mean over; "" for one sample
    source: str  # "over 1h from Prometheus", or ONE_SAMPLE (and why, when Prometheus had none)
    peak_m: float | None = None  # the most one replica used in the window (Prometheus only)


class Meter:
    """What Deployments use, for one review: the mean over the CostPolicy's window from
    Prometheus while the metrics server answers from one, else `top`'s sample. The first
    answer that is not Prometheus's (no Prometheus configured, or it failed) turns the review
    to `top` for every workload after it, so a review without Prometheus asks once."""

    def __init__(self, toolbox: Toolbox) -> None:
        self.toolbox = toolbox
        self.prometheus = toolbox.has("workload_utilization")
        self._windows: dict[str, int] = {}  # CostPolicy name -> its window in seconds
        self._used: dict[tuple[str, str, int], Usage | None] = {}  # read once per review
        self._top: dict[str, list[Json]] = {}  # namespace -> its pods' `top` rows, read once

    async def deployments(self) -> list[Json]:
        """Every Deployment with FIELDS, page by page (as they are now: a downscale of this
        review shows in the right-sizing after it)."""
        return await every(
            self.toolbox, "list_resources", kind="deployments", output="fields", fields=FIELDS
        )

    async def pods_cpu(self, namespace: str, name: str) -> list[float]:
        """Millicores each pod of the Deployment uses now: one `top` of its namespace per
        review, its pods told by their names (`<name>-<template hash>-<suffix>`)."""
        if namespace not in self._top:
            self._top[namespace] = await every(self.toolbox, "top", what="pods",
                                               namespace=namespace)  # fmt: skip
        return [float(r.get("cpu_m") or 0) for r in pods_of(name, self._top[namespace])]

    async def use(self, namespace: str, name: str, replicas: int) -> Usage | None:
        """What the Deployment uses, read once per review (downscales and right-sizing share
        the meter)."""
        key = (namespace, name, replicas)
        if key not in self._used:
            self._used[key] = await self._read(namespace, name, replicas)
        return self._used[key]

    async def _read(self, namespace: str, name: str, replicas: int) -> Usage | None:
        why = ""
        if self.prometheus:
            window = await self.window(namespace, name)
            row, why = await self._row(namespace, name, window)
            if row is not None:
                peak = row.get("cpu_peak")
                said = f"over {window} from Prometheus"
                return Usage(
                    float(row["cpu_used"]) * 1000, replicas, window, said,
                    float(peak) * 1000 if isinstance(peak, int | float) and peak > 0 else None,
                )  # fmt: skip
        pods = await self.pods_cpu(namespace, name)
        said = f"{ONE_SAMPLE} ({why})" if why else ONE_SAMPLE
        return Usage(float(sum(pods)), len(pods), "", said) if pods else None

    async def window(self, namespace: str, name: str) -> str:
        """The longest `underused.window` of the CostPolicies covering the Deployment (found by
        the dry run's applicable policies), WINDOW when none names one."""
        if not self.toolbox.has("get_policy"):
            return WINDOW
        judged = await self.toolbox.call(
            "evaluate_action", action="resize", target=f"deployment/{name}", namespace=namespace
        )
        applicable = [str(a) for a in judged.get("applicable") or []]
        names = [
            a.split(":", 1)[0].split(" ", 1)[1] for a in applicable if a.startswith("CostPolicy ")
        ]
        spans = [await self._policy_window(policy) for policy in names]
        return _duration(max((s for s in spans if s), default=seconds(WINDOW)))

    async def _policy_window(self, policy: str) -> int:
        if policy not in self._windows:
            got = await self.toolbox.call("get_policy", name=policy, kind="CostPolicy")
            spec = (yaml.safe_load(str(got.get("yaml") or "")) or {}).get("spec") or {}
            self._windows[policy] = seconds(str((spec.get("underused") or {}).get("window", "")))
        return self._windows[policy]

    async def _row(
        self, namespace: str, name: str, window: str
    ) -> tuple[dict[str, Any] | None, str]:
        """The Deployment's Prometheus row over the window (`cpu_used` its mean, `cpu_peak` the
        most one pod used, in cores), or None and why not."""
        try:
            got = await self.toolbox.call(
                "workload_utilization", namespace=namespace, window=window, workload=name
            )
        except ToolFailed as failed:
            self.prometheus = False
            return None, f"the metrics server failed: {failed}"
        if got.get("source") != "prometheus":
            self.prometheus = False
            return None, ""
        rows = [r for r in got.get("workloads") or [] if r.get("kind") == "Deployment"]
        if not rows or not isinstance(rows[0].get("cpu_used"), int | float):
            return None, f"Prometheus saw none of its pods over {window}"
        return dict(rows[0]), ""


async def underused(toolbox: Toolbox, meter: Meter | None = None) -> list[Saving]:
    """Deployments using under UNDERUSED of the CPU they request, with the saving of fewer."""
    meter = meter or Meter(toolbox)
    found: list[Saving] = []
    for item in await meter.deployments():
        namespace, name = str(item["metadata.namespace"]), str(item["metadata.name"])
        replicas = int(item.get("spec.replicas") or 0)
        containers = item.get("spec.template.spec.containers") or []
        cpu, memory = requests(containers)
        if namespace in SYSTEM or replicas < 2 or cpu <= 0:
            continue
        use = await meter.use(namespace, name, replicas)
        if use is None:
            continue
        used = use.used_m
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
                utilization=round(utilization, 3),
                source=f"mean {use.source}" if use.window else use.source,
                savings_per_month=round(saved, 2),
                requests=asked(containers), proposal="", outcome="", applied=None, how="",
                approved_by="", steps=[],
            )
        )  # fmt: skip
    return sorted(found, key=lambda s: -s["savings_per_month"])


async def propose_and_apply(
    toolbox: Toolbox, store: BaseStore, saving: Saving, *, counters: str = "accept"
) -> Saving:
    """Propose the downscale (once), then apply exactly the decided action, once; a downscale
    rejected on these replicas and requests is reported, not proposed again."""
    _, namespace, name = saving["workload"].split("/", 2)
    stored = await store.aget(SPACE, saving["workload"])
    kept = None if stored is None else dict(stored.value)
    steps = saving["steps"]
    if kept is not None and kept.get("rejected"):
        if (kept["replicas"], kept["requests"]) == (saving["replicas"], saving["requests"]):
            return _rejected_earlier(saving, kept)
        kept = None  # the workload changed since: judge it afresh
    if kept is not None:
        waiter = f"savings {saving['workload']}"
        decided = await proposals.settle(
            toolbox, proposals.remembered(kept["decision"]), waiter=waiter
        )
        saving = {
            **saving,
            "replicas": int(kept["replicas"]),
            "proposed": int(kept["proposed"]),
            "requests": str(kept.get("requests", saving["requests"])),
        }
        steps.append(f"proposal {decided.proposal} is {decided.outcome or 'undecided'}")
    else:
        decided = await _propose(toolbox, saving, namespace, name, counters=counters)
        await store.aput(SPACE, saving["workload"], _kept_record(saving, decided))
        steps.append(
            f"proposed scale {saving['workload']} {saving['replicas']} -> {saving['proposed']} "
            f"as {decided.proposal}: {decided.outcome}"
        )
    saving = {**saving, "proposal": decided.proposal, "outcome": decided.outcome}
    if decided.outcome == "rejected":
        await store.aput(SPACE, saving["workload"], _kept_record(saving, decided, rejected=True))
        steps.append(
            f"rejected: {'; '.join(decided.reasons)}; nothing changed, and it is {_while(saving)}"
        )
        return saving
    if not decided.approved:
        steps.append(f"waiting for a person: approval {decided.approval}; nothing changed yet")
        return saving
    to = int((decided.action.get("replicas") or {}).get("to", saving["proposed"]))
    by = await approver(toolbox, decided.proposal)
    how, made = await write(
        toolbox, namespace, name, proposal=decided.proposal,
        edits=[{"path": "spec.replicas", "value": to}],
        title=f"Scale Deployment {namespace}/{name} {saving['replicas']} -> {to}",
        direct=("scale", {"kind": "deployment", "name": name, "namespace": namespace,
                          "replicas": to}),
    )  # fmt: skip
    steps.extend(made)
    await store.adelete(SPACE, saving["workload"])
    steps.append(
        f"scaled {saving['workload']} {saving['replicas']} -> {to} by {how}, under proposal "
        f"{decided.proposal} approved by {by} ({decided.text})"
    )
    return {**saving, "applied": to, "how": how, "approved_by": by}


async def _propose(
    toolbox: Toolbox, saving: Saving, namespace: str, name: str, *, counters: str
) -> proposals.Decided:
    record = await toolbox.call(
        "propose",
        action="scale",
        target=f"deployment/{name}",
        namespace=namespace,
        via=await via(toolbox, namespace, name),
        from_replicas=saving["replicas"],
        replicas=saving["proposed"],
        metrics={"cpu_utilization": saving["utilization"]},
        savings_per_month=saving["savings_per_month"],
        rationale=(
            f"{saving['workload']} uses {saving['utilization']:.0%} of the CPU it requests "
            f"over {saving['replicas']} replicas ({saving['source']}); {saving['proposed']} "
            f"would run it at about "
            f"{TARGET:.0%}, saving about ${saving['savings_per_month']:.2f} a month"
        ),
        counters=counters,
    )
    return proposals.decided(record)


async def via(toolbox: Toolbox, namespace: str, name: str) -> str:
    """How a change of the Deployment would be made, as the policy store judges it."""
    target = Target(kind="Deployment", name=name, namespace=namespace)
    return "pull-request" if await managed_manifest(toolbox, target) else "direct"


async def write(
    toolbox: Toolbox,
    namespace: str,
    name: str,
    *,
    proposal: str,
    edits: list[dict[str, Any]],
    title: str,
    direct: tuple[str, dict[str, Any]],
) -> tuple[str, list[str]]:
    """Make the decided change of Deployment `namespace/name` as a person's goes: a PR with
    exactly `edits` where git defines it (merged under `proposal`, synced after a dry run), else
    the gated write `direct` (tool, arguments) carrying `proposal`. How, and the steps taken."""
    target = Target(kind="Deployment", name=name, namespace=namespace)
    manifest = await managed_manifest(toolbox, target)
    if not manifest:
        tool, arguments = direct
        await toolbox.call(tool, **arguments, proposal=proposal)
        return f"gated write ({tool})", []
    number = await open_pr(
        toolbox, key=f"kubecrew/capacity-{name}-{proposal}", title=title[:200],
        path=manifest["file"], kind="Deployment", name=name, edits=edits, labels=[LABEL],
        body=f"{title}.\n\nPolicy: proposal {proposal}. Opened by kubecrew's capacity review: "
        "git defines this workload, so its change goes by pull request, like a person's.",
    )  # fmt: skip
    steps = [f"git defines it ({manifest['file']}): PR #{number}"]
    steps += await merge(toolbox, number, proposal, agent=toolbox.role.name)
    steps += await sync_change(toolbox, target)
    return f"PR #{number}, merged and synced", steps


async def approver(toolbox: Toolbox, proposal: str) -> str:
    """Who approved `proposal`: the person(s) who granted its approval request, else the one
    who decided it (the policy store, by the policies); "" while it is not approved."""
    shown = await toolbox.call("get_proposal", proposal_id=proposal)
    approval = shown.get("approval") or {}
    granted = [
        str(a.get("by")) for a in approval.get("answers") or []
        if isinstance(a, dict) and a.get("verdict") == "grant"
    ]  # fmt: skip
    if granted:
        return f"{', '.join(granted)} (approval {approval.get('id')})"
    decision = shown.get("decision") or {}
    if decision.get("outcome") not in APPROVED:
        return ""  # not approved (yet): nobody to name
    decided = str(decision.get("decided_by") or "")
    return "policy (the policy store)" if decided.endswith("policy-store") else decided


def _kept_record(
    saving: Saving, decided: proposals.Decided, *, rejected: bool = False
) -> dict[str, Any]:
    """What the store remembers of a proposal: the decision and what it was judged on."""
    return {
        "proposal": decided.proposal, "replicas": saving["replicas"],
        "proposed": saving["proposed"], "requests": saving["requests"],
        "decision": proposals.remember(decided), "rejected": rejected,
    }  # fmt: skip


def _rejected_earlier(saving: Saving, kept: dict[str, Any]) -> Saving:
    """The remembered rejection, reported once in this review; nothing proposed."""
    decided = proposals.remembered(kept["decision"])
    saving = {
        **saving, "proposed": int(kept["proposed"]), "proposal": decided.proposal,
        "outcome": decided.outcome,
    }  # fmt: skip
    saving["steps"].append(
        f"rejected earlier (proposal {decided.proposal}): {'; '.join(decided.reasons)}; "
        f"{_while(saving)}"
    )
    return saving


def _while(saving: Saving) -> str:
    return (
        f"not proposed again while it runs {saving['replicas']} replicas, each requesting "
        f"{saving['requests']}"
    )


async def _kept(toolbox: Toolbox, namespace: str, name: str, replicas: int, to: int) -> bool:
    """Whether the owners' policies would counter `replicas -> to` with no fewer replicas."""
    judged = await toolbox.call(
        "evaluate_action", action="scale", target=f"deployment/{name}", namespace=namespace,
        from_replicas=replicas, replicas=to,
    )  # fmt: skip
    counter = (judged.get("counter") or {}).get("replicas")
    return isinstance(counter, int) and counter >= replicas


def pods_of(deployment: str, rows: list[Json]) -> list[Json]:
    """The rows of the Deployment's pods, told by their names: `<name>-<template hash>-<suffix>`
    (web's pods are not web-api's, though both start with "web-")."""
    mine = re.compile(rf"{re.escape(deployment)}-[a-z0-9]{{1,10}}-[a-z0-9]{{5}}")
    return [row for row in rows if mine.fullmatch(str(row.get("name")))]


async def every(toolbox: Toolbox, tool: str, **arguments: Any) -> list[Json]:
    """All the items a paged read tool holds, `PAGE` at a time."""
    items: list[Json] = []
    while True:
        page = await toolbox.call(tool, **arguments, limit=PAGE, offset=len(items))
        found = [i for i in page.get("items") or [] if isinstance(i, dict)]
        items += found
        if not found or len(items) >= int(page.get("total") or 0):
            return items


def requests(containers: list[dict[str, Any]]) -> tuple[float, float]:
    """CPU (millicores) and memory (GiB) one replica requests."""
    cpu = memory = 0.0
    for container in containers:
        asked = (container.get("resources") or {}).get("requests") or {}
        cpu += millicores(str(asked.get("cpu", "0")))
        memory += gib(str(asked.get("memory", "0")))
    return cpu, memory


def asked(containers: list[dict[str, Any]]) -> str:
    """What one replica requests, as written, container by container (the basis a rejection
    was judged on: any change to it is a new workload to judge)."""
    parts = []
    for container in containers:
        amounts = (container.get("resources") or {}).get("requests") or {}
        said = ", ".join(f"{k} {v}" for k, v in sorted(amounts.items())) or "nothing"
        parts.append(f"{container.get('name')}: {said}")
    return "; ".join(parts)


def seconds(duration: str) -> int:
    """A policy's Go-style duration (`1h30m`) in seconds; 0 when it names none."""
    return sum(int(n) * _SECONDS[unit] for n, unit in _DURATION.findall(duration))


def _duration(seconds: int) -> str:
    """Seconds as PromQL writes a range: one number and its largest whole unit."""
    unit = next(u for u, size in _SECONDS.items() if seconds % size == 0)
    return f"{seconds // _SECONDS[unit]}{unit}"


def millicores(text: str) -> float:
    return float(text[:-1]) if text.endswith("m") else float(text) * 1000


def gib(text: str) -> float:
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "K": 1e3, "M": 1e6, "G": 1e9}
    for suffix, factor in units.items():
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * factor / 2**30
    return float(text) / 2**30
