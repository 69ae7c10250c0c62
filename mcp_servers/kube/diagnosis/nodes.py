"""Node analyzers: NotReady, pressure, cordoned, and any custom condition gone bad.

Ready False or Unknown (a kubelet that stopped posting status: NodeStatusUnknown), the pressure
conditions (Memory, Disk, PID) and NetworkUnavailable when True, `spec.unschedulable` (cordoned),
and other conditions that report a fault by being False (GPUHealthy False, as a GPU health
checker writes it) or True with a problem's name (node-problem-detector's `KernelDeadlock`,
`ReadonlyFilesystem`: any type not named like a health, such as `...Healthy` or `...Ready`).

A namespace's diagnosis reports only the nodes its pods run on. The pods on a bad node and the
workloads they belong to are named, bounded, in `related`, so diagnosing a Deployment shows the
node its pods sit on; `details["pods"]` counts them and `details["bare_pods"]` names those no
controller would recreate (a drain refuses them).

It knows node shapes; nothing of fixes or MCP.
"""

from __future__ import annotations

from typing import Any

from mcp_servers.kube.diagnosis.findings import Evidence, Finding, ObjectRef, Severity
from mcp_servers.kube.diagnosis.snapshot import Json, Snapshot, name_of, namespace_of, workload_of

_BAD_WHEN_TRUE = {"MemoryPressure", "DiskPressure", "PIDPressure", "NetworkUnavailable"}
_HEALTHY_WHEN_TRUE_SUFFIXES = ("Healthy", "Ready", "Available", "OK")
_KNOWN = {"Ready", *_BAD_WHEN_TRUE}
MAX_PODS, MAX_WORKLOADS = 20, 10


def analyze(snapshot: Snapshot) -> list[Finding]:
    found: list[Finding] = []
    pods_on: dict[str, list[Json]] = {}
    for pod in snapshot.of("pods"):
        node = (pod.get("spec") or {}).get("nodeName")
        if node and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
            pods_on.setdefault(str(node), []).append(pod)
    for node in snapshot.of("nodes"):
        residents = pods_on.get(name_of(node), [])
        if snapshot.namespace is not None and not residents:
            continue  # a namespace's diagnosis speaks of the nodes its pods run on
        found.extend(_node(node, *_residents(snapshot, residents)))
    return found


def _residents(
    snapshot: Snapshot, pods: list[Json]
) -> tuple[tuple[ObjectRef, ...], dict[str, Any]]:
    """The pods on a node and their workloads, bounded, and the counts a drain needs."""
    refs = [ObjectRef("Pod", name_of(p), namespace_of(p)) for p in pods]
    workloads: list[ObjectRef] = []
    bare = []
    for pod in pods:
        kind, name = workload_of(snapshot, pod)
        if kind == "Pod":
            bare.append(f"{namespace_of(pod)}/{name}")
        elif (ref := ObjectRef(kind, name, namespace_of(pod))) not in workloads:
            workloads.append(ref)
    related = (*refs[:MAX_PODS], *workloads[:MAX_WORKLOADS])
    return related, {"pods": len(pods), "bare_pods": bare[:MAX_PODS]}


def _node(node: Json, related: tuple[ObjectRef, ...], residents: dict[str, Any]) -> list[Finding]:
    ref = ObjectRef("Node", name_of(node))
    found: list[Finding] = []

    def add(code: str, severity: Severity, summary: str, cond: Json, confidence: float) -> None:
        evidence = Evidence(
            "condition",
            f"Node {ref.name} condition {cond.get('type')}",
            f"{cond.get('status')}/{cond.get('reason')}: {cond.get('message')} "
            f"(last heartbeat {cond.get('lastHeartbeatTime')})",
        )
        found.append(
            Finding(
                code,
                ref,
                severity,
                summary,
                (evidence,),
                confidence,
                related,
                {"condition": cond.get("type"), "reason": cond.get("reason"), **residents},
            )
        )

    for cond in (node.get("status") or {}).get("conditions") or []:
        kind, status = str(cond.get("type")), cond.get("status")
        if kind == "Ready" and status != "True":
            add(
                "NodeNotReady",
                "critical",
                f"node is not Ready ({status}: {cond.get('reason')}); its pods are at risk",
                cond,
                0.95,
            )
        elif kind in _BAD_WHEN_TRUE and status == "True":
            add(f"Node{kind}", "high", f"node reports {kind}: {cond.get('message')}", cond, 0.9)
        elif kind not in _KNOWN and _faulty(kind, str(status)):
            add(
                "NodeConditionFailed",
                "high",
                f"node condition {kind} is {status}: {cond.get('reason')}: {cond.get('message')}",
                cond,
                0.85,
            )
    if (node.get("spec") or {}).get("unschedulable"):
        found.append(
            Finding(
                "NodeUnschedulable",
                ref,
                "low",
                "node is cordoned: no new pods land on it",
                (Evidence("spec", str(ref), "spec.unschedulable: true"),),
                0.9,
            )
        )
    return found


def _faulty(kind: str, status: str) -> bool:
    healthy_name = kind.endswith(_HEALTHY_WHEN_TRUE_SUFFIXES)
    return (healthy_name and status == "False") or (not healthy_name and status == "True")
