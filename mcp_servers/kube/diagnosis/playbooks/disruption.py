"""PodDisruptionBudgets that allow no disruption with every pod healthy, and CronJobs suspended.

A budget that asks for as many healthy pods as there are blocks every drain and node upgrade.
Two ways out, ranked by what they cost: relax the budget (minAvailable one below the replicas,
or maxUnavailable 1), which accepts one pod down during voluntary disruptions; or run one more
replica, which keeps the guarantee and costs a pod's resources. With a single replica relaxing
means a full outage during each disruption, so scaling up ranks first there. A budget blocked by
unhealthy pods is doing its job: no fix is offered for it (the pods' own Findings are the fix).
"""

from __future__ import annotations

from collections.abc import Iterator

from mcp_servers.kube.diagnosis.findings import Finding, Fix, ObjectRef
from mcp_servers.kube.diagnosis.snapshot import Snapshot

_SCALABLE = {
    "Deployment": "deployments",
    "StatefulSet": "statefulsets",
    "ReplicaSet": "replicasets",
}


def pdb_fix(finding: Finding, snapshot: Snapshot) -> Iterator[Fix]:
    if not finding.details.get("by_design"):
        return
    expected = int(finding.details.get("expected") or 0)
    minimum, maximum = finding.details.get("min_available"), finding.details.get("max_unavailable")
    single = expected <= 1
    why = (
        f"{expected} pods, all healthy; minAvailable {minimum}, maxUnavailable {maximum}: "
        "no pod may ever be evicted",
    )
    if isinstance(minimum, int) and not single:
        yield Fix(
            finding.code,
            finding.ref,
            f"lower minAvailable to {expected - 1}",
            "merge",
            {"spec": {"minAvailable": expected - 1}},
            "one pod at a time may be evicted: drains and node upgrades proceed",
            "medium",
            f"during a drain or upgrade one of the {expected} pods may be down",
            0.75,
            why,
        )
    else:
        yield Fix(
            finding.code,
            finding.ref,
            "allow one unavailable pod (maxUnavailable 1)",
            "merge",
            {"spec": {"minAvailable": None, "maxUnavailable": 1}},
            "one pod at a time may be evicted: drains and node upgrades proceed",
            "high" if single else "medium",
            "with a single replica this accepts a full outage during each drain or upgrade"
            if single
            else f"during a drain or upgrade one of the {expected} pods may be down",
            0.45 if single else 0.7,
            why,
        )
    for kind, name in finding.details.get("workloads") or []:
        if kind not in _SCALABLE or not isinstance(minimum, int):
            continue
        target = ObjectRef(kind, name, finding.ref.namespace)
        obj = snapshot.by_name(_SCALABLE[kind], target.namespace, name) or {}
        replicas = int((obj.get("spec") or {}).get("replicas", 1) or 0)
        if replicas > minimum:
            continue
        yield Fix(
            finding.code,
            target,
            f"scale {kind} {name} to {minimum + 1} replicas",
            "merge",
            {"spec": {"replicas": minimum + 1}},
            f"{minimum + 1} healthy pods against minAvailable {minimum}: one may be evicted",
            "low",
            "costs one more pod's resources; an autoscaler managing the replicas may undo it",
            0.7 if single else 0.6,
            (*why, f"{kind} {name} runs {replicas} replicas"),
        )


def resume_fix(finding: Finding, snapshot: Snapshot) -> Iterator[Fix]:
    schedule = finding.details.get("schedule")
    yield Fix(
        finding.code,
        finding.ref,
        f"resume CronJob {finding.ref.name}",
        "merge",
        {"spec": {"suspend": False}},
        f"Jobs start again on its schedule ({schedule})",
        "medium",
        "it was suspended on purpose by someone, perhaps during an incident: ask first",
        0.5,
        ("spec.suspend is true: no Job has been started since",),
    )
