"""Node analyzers: NotReady, pressure, cordoned, and any custom condition gone bad.

Ready False or Unknown (a kubelet that stopped posting status: NodeStatusUnknown), the pressure
conditions (Memory, Disk, PID) and NetworkUnavailable when True, `spec.unschedulable` (cordoned),
and other conditions that report a fault by being False (GPUHealthy False, as a GPU health
checker writes it) or True with a problem-ish type (node-problem-detector's `KernelDeadlock`...).
The pods on a bad node are named, bounded, in `related`.

It knows node shapes; nothing of fixes or MCP.
"""

from __future__ import annotations

from mcp_servers.kube.diagnosis.findings import Evidence, Finding, ObjectRef, Severity
from mcp_servers.kube.diagnosis.snapshot import Json, Snapshot, name_of, namespace_of

_BAD_WHEN_TRUE = {"MemoryPressure", "DiskPressure", "PIDPressure", "NetworkUnavailable"}
_HEALTHY_WHEN_TRUE_SUFFIXES = ("Healthy", "Ready", "Available", "OK")
_KNOWN = {"Ready", *_BAD_WHEN_TRUE}


def analyze(snapshot: Snapshot) -> list[Finding]:
    found: list[Finding] = []
    pods_on: dict[str, list[ObjectRef]] = {}
    for pod in snapshot.of("pods"):
        node = (pod.get("spec") or {}).get("nodeName")
        if node:
            pods_on.setdefault(str(node), []).append(
                ObjectRef("Pod", name_of(pod), namespace_of(pod))
            )
    for node in snapshot.of("nodes"):
        found.extend(_node(node, tuple(pods_on.get(name_of(node), [])[:20])))
    return found


def _node(node: Json, pods: tuple[ObjectRef, ...]) -> list[Finding]:
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
                pods,
                {"condition": cond.get("type"), "reason": cond.get("reason")},
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
        elif (
            kind not in _KNOWN and status == "False" and kind.endswith(_HEALTHY_WHEN_TRUE_SUFFIXES)
        ):
            add(
                "NodeConditionFailed",
                "high",
                f"node condition {kind} is False: {cond.get('reason')}: {cond.get('message')}",
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
