"""How the pod rules state what they saw: a Finding about a pod's workload, the events about a
pod as Evidence, a container's spec, and the age of a container state.

Only what the pod rule modules (`pods`, `crashes`, `references`, `logs`) share lives here; each
rule's own reading of a status stays in its module.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from mcp_servers.kube.diagnosis.findings import Evidence, Finding, ObjectRef, Severity
from mcp_servers.kube.diagnosis.snapshot import Json, Snapshot, name_of, namespace_of, workload_of


def pod_finding(
    snapshot: Snapshot,
    pod: Json,
    code: str,
    severity: Severity,
    summary: str,
    evidence: list[Evidence],
    confidence: float,
    **details: Any,
) -> Finding:
    """A Finding about the object a person changes to change `pod` (its workload)."""
    kind, name = workload_of(snapshot, pod)
    namespace = namespace_of(pod)
    return Finding(
        code,
        ObjectRef(kind, name, namespace),
        severity,
        summary,
        tuple(evidence),
        confidence,
        (ObjectRef("Pod", name_of(pod), namespace),),
        {**details, "pod": name_of(pod), "namespace": namespace},
    )


def pod_events(snapshot: Snapshot, pod: Json, *reasons: str, limit: int = 3) -> list[Evidence]:
    found = [
        e
        for e in snapshot.events_for("Pod", namespace_of(pod), name_of(pod))
        if e.get("reason") in reasons
    ]
    return [
        Evidence("event", f"event {e.get('reason')} on Pod {name_of(pod)}", str(e.get("message")))
        for e in found[-limit:]
    ]


def spec_container(pod: Json, name: str) -> Json:
    spec = pod.get("spec") or {}
    for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        if container.get("name") == name:
            return dict(container)
    return {}


def seconds_between(start: object, end: object) -> float | None:
    """Seconds from one RFC 3339 timestamp to another, or None when either is missing."""
    try:
        begun = datetime.fromisoformat(str(start))
        ended = datetime.fromisoformat(str(end))
    except ValueError:
        return None
    return (ended - begun).total_seconds()
