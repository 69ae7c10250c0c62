"""Right-sizing a workload from what it used: "right-size web", "is web over-provisioned?".

Evidence first: Prometheus, through the metrics server (`sources` says whether there is one),
over a window (1h, or "over the last 30m"), per container of the workload's pods: the p95 of
CPU use (a subquery of `rate` over the window), the peak memory working set, and how many
samples back them (`usage_queries`: the PromQL travels with the answer). No Prometheus, or
fewer than `MIN_SAMPLES` samples, is a clear answer saying what is missing, and nothing
changes: a sizing guessed from a few points is worse than none.

`recommend` sets requests at use x headroom, rounded up to sane units and never below a floor,
and keeps a memory limit at least the request and above the peak. Only a change worth making
becomes a pull request to the team's GitOps repository (field edits of the manifest, comments
kept): proposed to the policy store first (action resize, via pull-request, with the expected
saving and the CPU utilization the CostPolicy judges by), merged only when policy approved,
then synced after a dry run and validated as deploy.py does. An approval a person must give
leaves the PR open, linked to the request. The branch names the workload and the exact edits,
so asking again reuses the PR. A workload no plain manifest defines gets the numbers, no PR.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
from dataclasses import dataclass
from typing import Any

from agents.dev_team import changes, tasks
from agents.dev_team.state import TargetRef
from agents.runtime.errors import ToolFailed
from agents.runtime.loop.mutation import NeedsApproval, Refused, decide_proposal, sync_change
from agents.runtime.loop.state import Target
from agents.runtime.loop.validation import validate
from agents.runtime.prices import PRICES
from agents.runtime.toolbox import Toolbox

LABEL = "kubecrew-rightsize"
WINDOW = "1h"
MIB, GIB = 2**20, 2**30
MIN_SAMPLES = 20  # per container, across its pods: fewer is too little to size by
RATE = "2m"  # the rate window under the p95: at least two scrapes at a 60 s interval
CPU_HEADROOM, MEMORY_HEADROOM, LIMIT_HEADROOM = 1.3, 1.25, 1.5  # over p95 CPU and peak memory
CPU_FLOOR, MEMORY_FLOOR = 0.01, 32 * MIB  # never request less: startup and spikes need room
WORTH = 0.8  # lower a request only to under 80% of it: no churn for crumbs
_WINDOW = re.compile(r"\b(\d{1,4})\s*(s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?)\b")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_UNITS = {"Ki": 2**10, "Mi": MIB, "Gi": GIB, "Ti": 2**40, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def window_of(question: str) -> str:
    """The window asked for ("over the last 30m", "for 2 hours"), as Prometheus writes it."""
    found = _WINDOW.search(question.lower())
    if found is None or int(found.group(1)) == 0:
        return WINDOW
    return f"{int(found.group(1))}{found.group(2)[0]}"


def usage_queries(kind: str, name: str, namespace: str, window: str) -> dict[str, str]:
    """The PromQL behind the numbers, per container. Pods are matched by the names their
    controller gives them (`web-<template hash>-<5>`, `db-<ordinal>`), anchored so web's pods
    are not web-api's, and so the pods of an older rollout in the window still count."""
    escaped = name.replace(".", "\\\\.")
    suffix = "[0-9]+" if kind == "StatefulSet" else "[a-z0-9]{1,10}-[a-z0-9]{5}"
    where = f'namespace="{namespace}",pod=~"{escaped}-{suffix}",container!="",container!="POD"'
    step = max(1, int(window[:-1]) * _SECONDS[window[-1]] // 240)
    cpu = f"rate(container_cpu_usage_seconds_total{{{where}}}[{RATE}])[{window}:{step}s]"
    memory = f"container_memory_working_set_bytes{{{where}}}[{window}]"
    return {
        "cpu_p95": f"max by (container) (quantile_over_time(0.95, {cpu}))",
        "memory_peak": f"max by (container) (max_over_time({memory}))",
        "samples": f"sum by (container) (count_over_time({memory}))",
        "pods": f"count by (container) (count_over_time({memory}))",
    }


@dataclass(frozen=True)
class Size:
    """One container: what it used, what it asks for now, and what to set (None: leave)."""

    container: str
    cpu_p95: float  # cores
    memory_peak: float  # bytes
    samples: int
    pods: int
    cpu: float | None  # the request now (cores); None: none is set
    memory: float | None  # the request now (bytes)
    cpu_limit: float | None
    memory_limit: float | None
    new: dict[str, float] = dataclasses.field(default_factory=dict)  # "requests.cpu" -> value

    def edits(self) -> list[dict[str, Any]]:
        at = f"spec.template.spec.containers[name={self.container}].resources"
        return [
            {"path": f"{at}.{key}", "value": (_cpu if key.endswith("cpu") else _mem)(value)}
            for key, value in self.new.items()
        ]

    def describe(self) -> str:
        cpu = f"CPU p95 {_cpu(self.cpu_p95)} of "
        cpu += _cpu(self.cpu) if self.cpu else "no request"
        memory = f"memory peak {_mem(self.memory_peak)} of "
        memory += _mem(self.memory) if self.memory else "no request"
        for key, value in self.new.items():
            kind, resource = key.split(".")
            shown = _cpu(value) if resource == "cpu" else _mem(value)
            said = f" -> request {shown}" if kind == "requests" else f", limit -> {shown}"
            cpu, memory = (cpu + said, memory) if resource == "cpu" else (cpu, memory + said)
        pods = f"{self.pods} pod" + "s" * (self.pods != 1)
        return f"{self.container}: {cpu}, {memory} ({self.samples} samples, {pods})"

    def saving(self) -> float:
        """Per replica and month at the crew's list prices (`prices.PRICES`; negative: a cost)."""
        cpu = (self.cpu or 0.0) - self.new.get("requests.cpu", self.cpu or 0.0)
        memory = (self.memory or 0.0) - self.new.get("requests.memory", self.memory or 0.0)
        return cpu * PRICES["cpu"] + memory / GIB * PRICES["memory_gib"]

    def as_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "edits": self.edits()}


def recommend(container: dict[str, Any], used: dict[str, float]) -> Size:
    """Requests at use x headroom, rounded up to sane units, never below the floors; a memory
    limit raised to hold the request and the peak with room; a CPU limit to hold the request."""
    resources = container.get("resources") or {}
    asked, capped = resources.get("requests") or {}, resources.get("limits") or {}
    p95, peak = used.get("cpu_p95", 0.0), used.get("memory_peak", 0.0)
    size = Size(
        container["name"], p95, peak, int(used.get("samples", 0)), int(used.get("pods", 0)),
        _quantity(asked.get("cpu")), _quantity(asked.get("memory")),
        _quantity(capped.get("cpu")), _quantity(capped.get("memory")),
    )  # fmt: skip
    new: dict[str, float] = {}
    cpu = _round_cpu(max(CPU_FLOOR, p95 * CPU_HEADROOM))
    memory = _round_mem(max(MEMORY_FLOOR, peak * MEMORY_HEADROOM))
    if size.cpu is None or cpu < size.cpu * WORTH or cpu > size.cpu:
        new["requests.cpu"] = cpu
    if size.memory is None or memory < size.memory * WORTH or memory > size.memory:
        new["requests.memory"] = memory
    cpu_after = new.get("requests.cpu", size.cpu or 0.0)
    memory_after = new.get("requests.memory", size.memory or 0.0)
    if size.cpu_limit is not None and size.cpu_limit < cpu_after:
        new["limits.cpu"] = cpu_after
    if size.memory_limit is not None and size.memory_limit < max(
        memory_after, peak * MEMORY_HEADROOM
    ):
        new["limits.memory"] = max(memory_after, _round_mem(peak * LIMIT_HEADROOM))
    return dataclasses.replace(size, new=new)


@tasks.register("rightsize")
async def right_size(request: tasks.Request) -> tasks.Done:
    toolbox, ref = request.toolbox, request.target
    where = f"{ref['kind']} {ref['name']} in {ref['namespace']}"
    if ref["kind"] not in ("Deployment", "StatefulSet"):
        return _done(
            "unsupported",
            f"{where} has no pods of its own to size: right-sizing is for Deployments and "
            "StatefulSets; ask about the workload behind it. Nothing changed.",
        )
    missing = await _no_prometheus(toolbox)
    if missing:
        return _done(
            "no-metrics",
            f"I cannot right-size {where}: {missing}. Sizing needs usage over a window, not a "
            "guess. Nothing changed.",
        )
    window = window_of(request.question)
    spec = await toolbox.call(
        "get_resource", kind=ref["kind"].lower(), name=ref["name"], namespace=ref["namespace"],
        output="fields", fields=["spec.replicas", "spec.template.spec.containers"],
    )  # fmt: skip
    replicas = int(spec.get("spec.replicas") or 1)
    containers = list(spec.get("spec.template.spec.containers") or [])
    queries = usage_queries(ref["kind"], ref["name"], ref["namespace"], window)
    usage = await _usage(toolbox, queries)
    data: dict[str, Any] = {"window": window, "queries": queries, "replicas": replicas}
    counts = {c["name"]: int(usage.get(c["name"], {}).get("samples", 0)) for c in containers}
    if not containers or min(counts.values()) < MIN_SAMPLES:
        shown = ", ".join(f"{name}: {n}" for name, n in counts.items())
        return _done(
            "no-metrics",
            f"I cannot right-size {where} yet: Prometheus has too few samples of its containers "
            f"over the last {window} ({shown}; at least {MIN_SAMPLES} each needed, of "
            "container_memory_working_set_bytes and container_cpu_usage_seconds_total). Ask "
            "again once it has scraped longer, or over a longer window. Nothing changed.",
            data,
        )
    sizes = [recommend(c, usage[c["name"]]) for c in containers]
    saving = round(sum(s.saving() for s in sizes) * replicas, 2)
    data |= {"containers": [s.as_dict() for s in sizes], "savings_per_month": saving}
    numbers = "; ".join(s.describe() for s in sizes)
    edits = [e for s in sizes for e in s.edits()]
    if not edits:
        return _done(
            "right-sized",
            f"{where} is sized about right over the last {window}: {numbers}. Nothing changed.",
            data,
        )
    per = f"a month over {replicas} replica{'s' * (replicas != 1)} at list prices"
    money = f"saves about ${saving:.2f} {per}" if saving >= 0 else f"costs ${-saving:.2f} {per}"
    said = f"over the last {window} ({numbers}); it {money}"
    if request.wondering:
        return _done(
            "recommended",
            f"I recommend resizing {where} {said}. Say 'right-size {ref['name']}' and I open "
            "the pull request. Nothing changed.",
            data,
        )
    hits = await toolbox.call(
        "find_manifest", kind=ref["kind"], name=ref["name"], namespace=ref["namespace"]
    )
    plain = [h for h in hits.get("found", []) if not h.get("rendered_by")]
    if not plain:
        return _done(
            "recommended",
            f"I recommend resizing {where} {said}. No plain manifest of the team repository "
            "defines it (not managed from git, or rendered by kustomize), so I opened no pull "
            "request: set these where it is defined. Nothing changed.",
            data,
        )
    try:
        return await _change(request, plain[0]["file"], edits, said, data)
    except Refused as refused:
        return _done(
            "refused",
            f"I recommend resizing {where} {said}. I did not change it: {refused}. "
            "Nothing changed.",
            data,
        )


async def _no_prometheus(toolbox: Toolbox) -> str:
    """Why usage over a window cannot be had here, or "" when Prometheus answers."""
    if not toolbox.has("query") or not toolbox.has("sources"):
        return (
            "no metrics server is configured for me (give me a Prometheus URL, e.g. "
            "`--prometheus http://prometheus:9090`)"
        )
    sources = await toolbox.call("sources")
    if sources.get("source") != "prometheus":
        return (
            f"the metrics server has no Prometheus, only {sources.get('source')} (one current "
            "sample, no history); configure a Prometheus URL that scrapes the kubelets' "
            "cAdvisor and kube-state-metrics"
        )
    return ""


async def _usage(toolbox: Toolbox, queries: dict[str, str]) -> dict[str, dict[str, float]]:
    """container -> {cpu_p95, memory_peak, samples, pods} from the queries' instant vectors."""
    found: dict[str, dict[str, float]] = {}
    for measure, promql in queries.items():
        answer = await toolbox.call("query", promql=promql)
        for series in answer.get("result") or []:
            container = str((series.get("metric") or {}).get("container", ""))
            value = float(series["value"][1])
            if container and not math.isnan(value):  # NaN: no points in the window
                found.setdefault(container, {})[measure] = value
    return found


async def _change(
    request: tasks.Request, file: str, edits: list[dict[str, Any]], said: str, data: dict[str, Any]
) -> tasks.Done:
    """Propose, open the PR, merge per policy, sync and validate: one resize."""
    toolbox, ref, agent = request.toolbox, request.target, request.agent
    where = f"{ref['kind']} {ref['name']} in {ref['namespace']}"
    digest = hashlib.sha256(json.dumps(edits, sort_keys=True).encode()).hexdigest()[:10]
    key = f"{LABEL}-{ref['namespace']}-{ref['name']}-{digest}"
    try:
        proposal = await decide_proposal(
            toolbox, key=key, agent=agent, **changes.by_pr(ref, "resize"),
            rationale=f"right-size {where} from its use {said} [{key}]",
            savings_per_month=max(data["savings_per_month"], 0.0),
            metrics=await _utilization(toolbox, ref, data["window"]),
        )  # fmt: skip
    except NeedsApproval as waiting:
        number = await _open_pr(toolbox, ref, file, edits, said, key, waiting.request)
        return _done(
            "waiting",
            f"I recommend resizing {where} {said}. I opened PR #{number} and left it open: "
            f"policy asks a person first ({waiting}), approval request {waiting.request}; an "
            "approver's review of the PR answers it. Ask me again once it is granted.",
            data | {"pr": number, "proposal": waiting.proposal, "approval": waiting.request},
        )
    number = await _open_pr(toolbox, ref, file, edits, said, key, "")
    notes = [f"PR #{number} on branch {key} (policy: proposal {proposal})"]
    notes.extend(await changes.merge(toolbox, number, proposal, agent=agent))
    target = Target(kind=ref["kind"], name=ref["name"], namespace=ref["namespace"])
    notes.extend(await sync_change(toolbox, target))
    verdict = await validate(toolbox, target, "", request.settings)
    state = "runs healthy on them" if verdict.held else "did not become healthy on them"
    return _done(
        "resized" if verdict.held else "failed",
        f"Right-sized {where} {said}. PR #{number} sets the new requests: merged (policy: "
        f"proposal {proposal}) and synced; it {state}: {'; '.join(verdict.evidence)}.",
        data | {"pr": number, "proposal": proposal, "notes": notes},
    )


async def _utilization(toolbox: Toolbox, ref: TargetRef, window: str) -> dict[str, float]:
    """CPU used over CPU requested, the metric the CostPolicy judges "underused" by."""
    try:
        got = await toolbox.call(
            "workload_utilization", namespace=ref["namespace"], window=window, workload=ref["name"]
        )
    except ToolFailed:
        return {}  # the policy then only warns that it cannot tell
    rows = [r for r in got.get("workloads", []) if r.get("kind") == ref["kind"]]
    ratio = rows[0].get("cpu_of_requests") if rows else None
    return {"cpu_utilization": float(ratio)} if isinstance(ratio, int | float) else {}


async def _open_pr(
    toolbox: Toolbox,
    ref: TargetRef,
    file: str,
    edits: list[dict[str, Any]],
    said: str,
    key: str,
    approval: str,
) -> int:
    return await changes.open_pr(
        toolbox,
        key=key,
        title=f"Right-size {ref['kind']} {ref['name']} in {ref['namespace']}",
        path=file,
        kind=ref["kind"],
        name=ref["name"],
        edits=edits,
        body=f"Sets the requests of {ref['kind']} {ref['name']} from what it used {said}.\n\n"
        "Opened by the kubecrew Dev Team agent from Prometheus usage; merged automatically only "
        "when policy approves, then synced and validated.",
        labels=[LABEL],
        approval=approval,
    )


def _round_cpu(cores: float) -> float:
    millis = math.ceil(cores * 1000 - 1e-9)
    step = 5 if millis < 100 else 25 if millis < 1000 else 100
    return math.ceil(millis / step) * step / 1000


def _round_mem(size: float) -> float:
    mib = math.ceil(size / MIB - 1e-9)
    step = 8 if mib < 256 else 64 if mib < 4096 else 256
    return float(math.ceil(mib / step) * step * MIB)


def _cpu(cores: float) -> str:
    millis = round(cores * 1000)
    return str(millis // 1000) if millis and millis % 1000 == 0 else f"{millis}m"


def _mem(size: float) -> str:
    mib = round(size / MIB)
    return f"{mib // 1024}Gi" if mib and mib % 1024 == 0 else f"{mib}Mi"


def _quantity(text: object) -> float | None:
    """A Kubernetes quantity in base units (cores, bytes); None when unset."""
    if text is None or text == "":
        return None
    raw = str(text)
    for suffix, factor in _UNITS.items():
        if raw.endswith(suffix):
            return float(raw[: -len(suffix)]) * factor
    return float(raw[:-1]) / 1000 if raw.endswith("m") else float(raw)


def _done(outcome: str, summary: str, data: dict[str, Any] | None = None) -> tasks.Done:
    return tasks.Done(summary, {"outcome": outcome, "pr": 0, "proposal": "", **(data or {})})
