"""Rule-based diagnosis of a cluster, a namespace or one object, and the fixes it suggests.

    snapshot.py     one list per kind for the scope (Secret values never read into it)
    pods.py         pull errors, crash loops, OOM, missing ConfigMap/Secret, Pending, probes
    workloads.py    Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs, CronJobs
    network.py      Services, Endpoints, Ingresses, NetworkPolicies
    storage.py      PersistentVolumeClaims and StorageClasses
    nodes.py        NotReady, pressure, cordoned, custom conditions (GPUHealthy)
    scaling.py      HPAs and PDBs
    findings.py     Finding / Evidence / Fix
    recommend.py    playbooks: findings -> ranked fixes

No LLM, no writes: `diagnose` reads once and runs every analyzer on the snapshot; for one object
it keeps the findings about that object or the pods it owns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mcp_servers.kube.connection import Api
from mcp_servers.kube.diagnosis import network, nodes, pods, scaling, storage, workloads
from mcp_servers.kube.diagnosis.findings import Finding, ObjectRef, ranked
from mcp_servers.kube.diagnosis.snapshot import Snapshot, take

ANALYZERS: tuple[Callable[[Snapshot], list[Finding]], ...] = (
    pods.analyze,
    workloads.analyze,
    network.analyze,
    storage.analyze,
    nodes.analyze,
    scaling.analyze,
)


@dataclass(frozen=True)
class Diagnosis:
    findings: list[Finding]  # ranked, highest severity first
    snapshot: Snapshot


def diagnose(api: Api, *, namespace: str | None, target: ObjectRef | None = None) -> Diagnosis:
    """Findings for `namespace` (None: the cluster), narrowed to `target` when given."""
    snapshot = take(api, namespace)
    found = [finding for analyze in ANALYZERS for finding in analyze(snapshot)]
    if target is not None:
        found = [f for f in found if f.concerns(target)]
    return Diagnosis(ranked(found), snapshot)
