"""What a kept object adds to a cluster-wide count, worked out once when it arrives.

A `Kind` may name a summary: a small tuple computed from each object as the store keeps it, so
an answer over the whole cluster (the overview's pods per node, their requests, the unhealthy
ones) walks tuples instead of decoding 50,000 objects. `pod` is the pods' summary, and
`pod_unhealthy` the rule it and a walk over the objects share.
"""

from __future__ import annotations

from typing import NamedTuple

from core import quantity
from core.connection import Json


class PodSummary(NamedTuple):
    node: str  # "" while unscheduled
    running: bool  # neither Succeeded nor Failed: its requests count on its node
    unhealthy: bool
    cpu: float  # cores requested by its containers
    memory: float  # bytes requested by its containers


def pod(obj: Json) -> PodSummary:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    cpu = memory = 0.0
    for container in spec.get("containers") or []:
        requested = (container.get("resources") or {}).get("requests") or {}
        cpu += quantity.amount(requested.get("cpu"))
        memory += quantity.amount(requested.get("memory"))
    return PodSummary(
        str(spec.get("nodeName") or ""),
        status.get("phase") not in ("Succeeded", "Failed"),
        pod_unhealthy(obj),
        cpu,
        memory,
    )


def pod_unhealthy(obj: Json) -> bool:
    """Not Running and Ready (a pod that Succeeded is done, not unhealthy)."""
    status = obj.get("status") or {}
    phase = status.get("phase")
    if phase == "Succeeded":
        return False
    ready: Json = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), {})
    return phase != "Running" or ready.get("status") != "True"
