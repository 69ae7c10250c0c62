"""Replica counts: a Service's backend scaled to 0 replicas is scaled back up.

The count to go back to is the last one people declared (`kubectl apply`'s last-applied
configuration), else the autoscaler's minimum, else 1: a start, not a capacity plan. Scaling to
0 is often done on purpose (a maintenance, a cost cut), so the fix is a proposal with that risk
said, never a selector patch: the selector is right, it only has nothing to select.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from mcp_servers.kube.diagnosis.findings import Finding, Fix, ObjectRef, Step, in_namespace
from mcp_servers.kube.diagnosis.snapshot import Json, Snapshot, name_of, namespace_of

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
PLURALS = {"Deployment": "deployments", "StatefulSet": "statefulsets"}


def scale_up_fix(finding: Finding, snapshot: Snapshot) -> Iterator[Fix]:
    for kind, name in finding.details.get("backends") or []:
        backend = ObjectRef(str(kind), str(name), finding.ref.namespace)
        obj = snapshot.by_name(PLURALS.get(backend.kind, ""), backend.namespace, backend.name)
        if obj is None:
            continue
        replicas, why = _replicas(snapshot, backend, obj)
        count = f"{replicas} replica{'' if replicas == 1 else 's'}"
        yield Fix(
            finding.code,
            backend,
            f"scale {backend.kind} {backend.name} to {count}",
            "steps",
            {},
            f"{count} of {backend.kind} {backend.name} start, become Ready and serve "
            f"Service {finding.ref.name} as its endpoints",
            "medium",
            "0 replicas is often set on purpose (a maintenance, a cost cut, a paused app): ask "
            "whoever scaled it down before scaling it up",
            0.8,
            (
                f"{backend.kind} {backend.name} asks for 0 replicas and its pod template "
                f"matches Service {finding.ref.name}'s selector",
                why,
            ),
            (
                Step(
                    "scale",
                    in_namespace(
                        backend.namespace,
                        kind=backend.kind.lower(),
                        name=backend.name,
                        replicas=replicas,
                    ),
                ),
            ),
        )


def _replicas(snapshot: Snapshot, backend: ObjectRef, obj: Json) -> tuple[int, str]:
    """The count to scale back to, and why that one."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    try:
        applied = json.loads(annotations.get(LAST_APPLIED) or "{}")
    except ValueError:
        applied = {}
    spec = applied.get("spec") if isinstance(applied, dict) else None
    declared = int((spec or {}).get("replicas") or 0) if isinstance(spec, dict) else 0
    if declared > 0:
        return declared, f"{declared} replicas is the count last applied with kubectl apply"
    for hpa in snapshot.of("horizontalpodautoscalers"):
        spec = hpa.get("spec") or {}
        target = spec.get("scaleTargetRef") or {}
        aimed = (target.get("kind"), target.get("name")) == (backend.kind, backend.name)
        if aimed and namespace_of(hpa) == backend.namespace:
            least = int(spec.get("minReplicas") or 1)
            return least, f"{least} is HorizontalPodAutoscaler {name_of(hpa)}'s minReplicas"
    return 1, "no earlier count is declared: 1 replica to start serving"
