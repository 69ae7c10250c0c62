"""Events analyzer: Warning events that no other rule reads, grouped per object and reason.

The other analyzers read the events they understand (pull failures, back-off, probe failures,
scheduling, mounts, provisioning, OOM kills) as evidence of their own Findings. Every other
Warning a component writes (a volume that cannot attach, a hook that failed, a CronJob that
cannot create its Job, a node's eviction threshold) would go unseen, so this reports them as
they are: one `WarningEvents` Finding per object (a pod's on its workload) and reason, with
the latest messages and how often it happened. `diagnose` keeps them only for objects no other
Finding speaks of, since there they would only repeat it. It knows event shapes; nothing else.
"""

from __future__ import annotations

from mcp_servers.kube.diagnosis.findings import Evidence, Finding, ObjectRef
from mcp_servers.kube.diagnosis.snapshot import Json, Snapshot, owner_ref, workload_of

# Reasons other analyzers read as evidence, and the kubelet's routine ones.
EXPLAINED = {
    "Failed", "BackOff", "Unhealthy", "FailedScheduling", "FailedMount", "OOMKilling",
    "ProvisioningFailed", "NodeNotReady", "FailedGetResourceMetric",
    "FailedComputeMetricsReplicas", "Killing", "ErrImageNeverPull", "InspectFailed",
}  # fmt: skip
MAX_FINDINGS = 20


def analyze(snapshot: Snapshot) -> list[Finding]:
    grouped: dict[tuple[ObjectRef, str], list[Json]] = {}
    for event in snapshot.of("events"):
        reason = str(event.get("reason") or "")
        if event.get("type") != "Warning" or reason in EXPLAINED:
            continue
        grouped.setdefault((_subject(snapshot, event), reason), []).append(event)
    found = []
    for (ref, reason), events in list(grouped.items())[:MAX_FINDINGS]:
        count = sum(int(e.get("count") or 1) for e in events)
        latest = events[-3:]
        found.append(
            Finding(
                "WarningEvents",
                ref,
                "medium" if count >= 3 else "low",
                f"{count} Warning event(s) {reason}: {latest[-1].get('message')}",
                tuple(Evidence("event", _source(e), str(e.get("message") or "")) for e in latest),
                0.6,
                details={"reason": reason, "count": count},
            )
        )
    return found


def _subject(snapshot: Snapshot, event: Json) -> ObjectRef:
    """The object the event is about, or the workload of a pod or ReplicaSet it is about."""
    obj = event.get("involvedObject") or event.get("regarding") or {}
    kind, name = str(obj.get("kind") or ""), str(obj.get("name") or "")
    namespace = str(obj.get("namespace") or "")
    if kind in ("Pod", "ReplicaSet"):
        found = snapshot.by_name(f"{kind.lower()}s", namespace, name)
        owner = owner_ref(snapshot, found) if found is not None else None
        if kind == "Pod" and found is not None:
            kind, name = workload_of(snapshot, found)
        elif owner is not None and owner[0] == "Deployment":
            kind, name = owner
    return ObjectRef(kind, name, namespace)


def _source(event: Json) -> str:
    obj = event.get("involvedObject") or event.get("regarding") or {}
    return f"event {event.get('reason')} on {obj.get('kind')} {obj.get('name')}"
