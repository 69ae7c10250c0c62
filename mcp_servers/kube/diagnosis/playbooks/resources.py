"""Memory and CPU sizes: a memory limit for an OOM-killed container, requests for an autoscaler
that has none to compute utilization from. Every value comes from what was observed (the limit
a container was killed at, metrics.k8s.io usage), and the evidence says which.

An OOM kill gets two candidate fixes, ranked by what the evidence supports: a higher limit
(right when the process needs more than it has from the start) and a rollback (right when memory
grows until the kill and the growth came with the current revision: a leak a larger limit only
postpones). When the current revision lowered the limit, the rollback restores it as well.
"""

from __future__ import annotations

from collections.abc import Iterator

from core.quantity import MIB, mebibytes, parse
from mcp_servers.kube.diagnosis import history
from mcp_servers.kube.diagnosis.findings import Finding, Fix, ObjectRef
from mcp_servers.kube.diagnosis.playbooks.rollbacks import rollback
from mcp_servers.kube.diagnosis.playbooks.templates import (
    container_patch,
    finding_workload,
    pod_risk,
    pod_spec,
    pod_spec_patch,
    template_container,
    workload,
)
from mcp_servers.kube.diagnosis.snapshot import Snapshot, name_of, namespace_of, workload_of

OOM_HEADROOM = 1.5
REQUEST_HEADROOM = 1.2
FLOOR = {"cpu": 0.01, "memory": 16 * MIB}  # no request below these, however idle the pods
FALLBACK = {"cpu": 0.1, "memory": 128 * MIB}  # when no usage was observed at all


def oom_fix(finding: Finding, snapshot: Snapshot) -> Iterator[Fix]:
    container = str(finding.details.get("container") or "")
    limit = finding.details.get("limit")
    leak = bool(finding.details.get("leak"))
    ran = finding.details.get("ran_seconds")
    back = history.rollback_target(snapshot, finding.ref, failing=finding.related)
    lowered = back is not None and _limit_of(back.to, container) > float(limit or 0)
    if back is not None and leak:
        limit_confidence, back_confidence = 0.5, 0.85
    elif back is not None and lowered:
        limit_confidence, back_confidence = 0.7, 0.75
    else:
        limit_confidence, back_confidence = (0.6 if leak else 0.8), 0.5
    yield from _limit_fix(finding, snapshot, container, limit_confidence)
    lived = f"; each instance ran {ran:.0f} s before the kill" if ran is not None else ""
    at = f"its {mebibytes(float(limit))} limit" if limit else "the node's memory"
    why = [
        f"OOMKilled at {at}{lived}",
        "memory grew until the kill: a leak that came with this revision"
        if leak
        else "the revision before had a higher memory limit"
        if lowered
        else "the kills began with this revision",
    ]
    yield from rollback(finding, snapshot, confidence=back_confidence, why=why)


def _limit_of(revision: history.Revision, container: str) -> float:
    for spec in revision.containers:
        if spec.get("name") == container:
            return parse(((spec.get("resources") or {}).get("limits") or {}).get("memory")) or 0.0
    return 0.0


def _limit_fix(
    finding: Finding, snapshot: Snapshot, container: str, confidence: float
) -> Iterator[Fix]:
    limit, usage = finding.details.get("limit"), finding.details.get("usage")
    observed = max(float(limit or 0), float(usage or 0))
    if not observed:
        return
    new = mebibytes(observed * OOM_HEADROOM)
    current = template_container(finding_workload(finding, snapshot) or {}, container)
    requests = (current.get("resources") or {}).get("requests") or {}
    resources: dict[str, dict[str, str]] = {"limits": {"memory": new}}
    if parse(requests.get("memory")) is not None:
        resources["requests"] = {"memory": str(requests["memory"])}
    leak = bool(finding.details.get("leak"))
    yield Fix(
        finding.code,
        finding.ref,
        f"raise the memory limit of container {container} to {new}",
        "strategic",
        container_patch(finding.ref.kind, container, {"resources": resources}),
        f"the container gets {OOM_HEADROOM}x its observed peak ({observed / MIB:.0f}Mi: it was "
        "killed at its limit) and "
        + (
            "lives longer between kills, but memory keeps growing: it is killed again later"
            if leak
            else "stops being OOMKilled"
        ),
        "medium",
        f"{pod_risk(finding.ref)}; each pod may use up to {new} of its node's memory"
        + ("; a leak only gets more room: fix the application or roll back" if leak else ""),
        confidence,
        (f"OOMKilled at limit {limit} bytes", f"metrics.k8s.io usage: {usage} bytes"),
    )


def requests_fix(finding: Finding, snapshot: Snapshot) -> Iterator[Fix]:
    """Requests for the HPA's resource on every container of its target that lacks one, from
    the most that container used on any pod of the target (metrics.k8s.io), plus headroom."""
    resource = str(finding.details.get("resource") or "")
    kind, name = str(finding.details.get("target_kind")), str(finding.details.get("target"))
    target = ObjectRef(kind, name, finding.ref.namespace)
    obj = workload(snapshot, target)
    if resource not in FLOOR or obj is None:
        return
    pods = [
        p for p in snapshot.pods_in(target.namespace) if workload_of(snapshot, p) == (kind, name)
    ]
    containers, evidence = [], []
    for container in pod_spec(kind, obj).get("containers") or []:
        cname = str(container.get("name"))
        if ((container.get("resources") or {}).get("requests") or {}).get(resource):
            continue
        used = [
            parse(snapshot.usage(namespace_of(p), name_of(p), cname).get(resource)) or 0.0
            for p in pods
        ]
        peak = max(used, default=0.0)
        value = max(peak * REQUEST_HEADROOM, FLOOR[resource]) if peak else FALLBACK[resource]
        text = _quantity(resource, value)
        containers.append({"name": cname, "resources": {"requests": {resource: text}}})
        evidence.append(
            f"container {cname}: peak {resource} use {_quantity(resource, peak)} over "
            f"{len(used)} pods -> request {text}"
            if peak
            else f"container {cname}: no {resource} usage observed yet -> a default of {text}"
        )
    if not containers:
        return
    patch = pod_spec_patch(kind, {"containers": containers})
    observed = all("no " not in e for e in evidence)
    yield Fix(
        finding.code,
        target,
        f"request {resource} on the containers of {kind} {name} that have none",
        "strategic",
        patch,
        f"the autoscaler computes {resource} utilization against the requests and scales "
        "(ScalingActive True)",
        "low",
        f"{pod_risk(target)}; the scheduler reserves the requested {resource} on a node",
        0.85 if observed else 0.6,
        (str(finding.evidence[0].text) if finding.evidence else "", *evidence),
    )


def _quantity(resource: str, value: float) -> str:
    if resource == "cpu":
        return f"{max(round(value * 1000), 1)}m"
    return mebibytes(value)
