"""Rule-based diagnosis of a cluster, a namespace or one object, and the fixes it suggests.

    snapshot.py     one list per kind for the scope (Secret values never read into it); the
                    reads that failed, with their HTTP status, as notes
    pods.py         pull errors, Pending (with the scheduler's reason), probes; dispatches to
    crashes.py      crash loops and OOM kills (a leak told from an undersized limit)
    references.py   missing ConfigMaps, Secrets and keys
    logs.py         Ready pods whose recent log lines are mostly errors
    events.py       Warning events no other rule reads (kept where nothing else is found)
    workloads.py    Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs, CronJobs
    network.py      Services, Endpoints, Ingresses, NetworkPolicies
    storage.py      PersistentVolumeClaims and StorageClasses
    nodes.py        NotReady, pressure, cordoned, custom conditions (GPUHealthy)
    scaling.py      HPAs (about the workload they scale too) and PDBs
    links.py        one object's finding explaining another's (a Service's pods, a claim's)
    evidence.py     how pod rules state a Finding
    history.py      a Deployment's revisions, and the one a rollback should go to
    findings.py     Finding / Evidence / Fix / Step
    recommend.py    findings -> ranked fixes, through the playbooks/ package

No LLM, no writes: `diagnose` reads once and runs every analyzer on the snapshot; for one object
it keeps the findings about that object, the pods it owns, or (a node) the workloads on it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from core.connection import Api
from mcp_servers.kube.diagnosis import (
    events,
    links,
    logs,
    network,
    nodes,
    pods,
    scaling,
    storage,
    workloads,
)
from mcp_servers.kube.diagnosis.findings import Finding, ObjectRef, ranked
from mcp_servers.kube.diagnosis.snapshot import Snapshot, take
from mcp_servers.kube.registries import Registries

ANALYZERS: tuple[Callable[[Snapshot], list[Finding]], ...] = (
    pods.analyze,
    workloads.analyze,
    network.analyze,
    storage.analyze,
    nodes.analyze,
    scaling.analyze,
    logs.analyze,
)


@dataclass(frozen=True)
class Diagnosis:
    findings: list[Finding]  # ranked, highest severity first
    snapshot: Snapshot


def diagnose(
    api: Api,
    *,
    namespace: str | None,
    target: ObjectRef | None = None,
    registry: Registries | None = None,
) -> Diagnosis:
    """Findings for `namespace` (None: the cluster), narrowed to `target` when given; the
    playbooks may ask `registry` which images exist."""
    snapshot = take(api, namespace, registry=registry)
    found = links.linked([finding for analyze in ANALYZERS for finding in analyze(snapshot)])
    explained = {f.ref for f in found} | {r for f in found for r in f.related}
    found.extend(f for f in events.analyze(snapshot) if f.ref not in explained)
    if target is not None:
        found = [f for f in found if f.concerns(target)]
    return Diagnosis(ranked(found), snapshot)
