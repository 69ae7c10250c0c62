"""Scaling analyzers: HorizontalPodAutoscalers that cannot scale, PDBs that block every eviction.

An HPA with ScalingActive False (often: the target's pods have no resource requests, so no
utilization can be computed), or AbleToScale False, or pinned at maxReplicas (ScalingLimited
TooManyReplicas), each also about the workload it scales (`related`); a PodDisruptionBudget
allowing 0 disruptions, which blocks drains. A budget that allows none because its pods are
unhealthy is doing its job (the pods are the problem); one that allows none with every pod
healthy is asking for more than the workload has (`details["by_design"]`), and only that one is
worth changing.

It knows HPA and PDB status shapes; nothing of fixes or MCP.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from mcp_servers.kube.diagnosis.findings import Evidence, Finding, ObjectRef
from mcp_servers.kube.diagnosis.snapshot import Json, Snapshot, name_of, namespace_of, workload_of

_MISSING_REQUEST = re.compile(r"missing request for ([\w./-]+)")


def analyze(snapshot: Snapshot) -> list[Finding]:
    found: list[Finding] = []
    for hpa in snapshot.of("horizontalpodautoscalers"):
        found.extend(_hpa(hpa))
    for pdb in snapshot.of("poddisruptionbudgets"):
        found.extend(_pdb(snapshot, pdb))
    return found


def _hpa(hpa: Json) -> Iterator[Finding]:
    ref = ObjectRef("HorizontalPodAutoscaler", name_of(hpa), namespace_of(hpa))
    target = (hpa.get("spec") or {}).get("scaleTargetRef") or {}
    details = {"target_kind": target.get("kind"), "target": target.get("name")}
    # about the workload it scales too: "why does web not autoscale?" asks about web
    scaled = (
        (ObjectRef(str(target["kind"]), str(target["name"]), ref.namespace),)
        if target.get("kind") and target.get("name")
        else ()
    )
    for cond in (hpa.get("status") or {}).get("conditions") or []:
        text = f"{cond.get('status')}/{cond.get('reason')}: {cond.get('message')}"
        evidence = (Evidence("condition", f"{ref} condition {cond.get('type')}", text),)
        message = str(cond.get("message") or "")
        if cond.get("type") in ("ScalingActive", "AbleToScale") and cond.get("status") == "False":
            missing = _MISSING_REQUEST.search(message)
            yield Finding(
                "HPAMissingRequests" if missing else f"HPA{cond.get('type')}False",
                ref,
                "high",
                f"autoscaler cannot scale: {message}",
                evidence,
                0.9,
                scaled,
                details={**details, "resource": missing.group(1) if missing else None},
            )
        elif cond.get("type") == "ScalingLimited" and cond.get("reason") == "TooManyReplicas":
            yield Finding(
                "HPAAtMaxReplicas",
                ref,
                "medium",
                f"autoscaler is at its maximum: {message}",
                evidence,
                0.8,
                scaled,
                details=details,
            )


def _pdb(snapshot: Snapshot, pdb: Json) -> Iterator[Finding]:
    spec, status = pdb.get("spec") or {}, pdb.get("status") or {}
    if "disruptionsAllowed" not in status or int(status.get("disruptionsAllowed") or 0) != 0:
        return
    namespace = namespace_of(pdb)
    ref = ObjectRef("PodDisruptionBudget", name_of(pdb), namespace)
    expected = int(status.get("expectedPods") or 0)
    healthy = int(status.get("currentHealthy") or 0)
    desired = int(status.get("desiredHealthy") or 0)
    labels = (spec.get("selector") or {}).get("matchLabels") or {}
    workloads: list[ObjectRef] = []
    for pod in snapshot.pods_in(namespace):
        pod_labels = (pod.get("metadata") or {}).get("labels") or {}
        if labels and all(pod_labels.get(k) == v for k, v in labels.items()):
            kind, name = workload_of(snapshot, pod)
            if (workload := ObjectRef(kind, name, namespace)) not in workloads:
                workloads.append(workload)
    by_design = bool(expected) and healthy >= expected
    why = (
        "every pod is healthy, yet the budget allows no disruption: it asks for as many "
        "healthy pods as there are"
        if by_design
        else f"{expected - healthy} of {expected} pods are unhealthy: the budget protects the rest"
    )
    yield Finding(
        "PDBBlocksDisruptions",
        ref,
        "medium" if by_design else "low",
        "no voluntary disruption allowed: evictions and drains of its pods will wait",
        (
            Evidence(
                "status",
                str(ref),
                f"disruptionsAllowed 0, currentHealthy {healthy}, desiredHealthy {desired}, "
                f"expectedPods {expected}",
            ),
            Evidence(
                "spec",
                str(ref),
                f"minAvailable {spec.get('minAvailable')}, "
                f"maxUnavailable {spec.get('maxUnavailable')}: {why}",
            ),
        ),
        0.9 if by_design else 0.7,
        tuple(workloads[:5]),
        {
            "min_available": spec.get("minAvailable"),
            "max_unavailable": spec.get("maxUnavailable"),
            "expected": expected,
            "healthy": healthy,
            "by_design": by_design,
            "workloads": [(w.kind, w.name) for w in workloads[:5]],
        },
    )
