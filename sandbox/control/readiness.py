"""When a pod counts as ready, since when, and when it becomes available.

Every controller that counts pods (endpoints and slices, ReplicaSets, disruption budgets, the
autoscaler) must agree on these, so they are defined once: ready means a `Ready` condition with
status True (a terminating pod may still be ready: the endpoint controllers report it as
serving), ready since that condition's `lastTransitionTime`, and available once it has been
ready for `minReadySeconds`. Plain functions of a pod object: no store, no clock.
"""

from __future__ import annotations

from typing import Any

from sandbox.clock import parse_time
from sandbox.store import Obj


def ready_condition(pod: Obj) -> dict[str, Any] | None:
    for condition in (pod.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "Ready":
            return dict(condition)
    return None


def is_ready(pod: Obj) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def ready_to_count(pod: Obj) -> bool:
    """Ready and not terminating: what a workload controller counts toward its replicas."""
    return is_ready(pod) and not pod["metadata"].get("deletionTimestamp")


def ready_for(pod: Obj, now: float) -> float:
    """Seconds the pod has been Ready (0 when it is not)."""
    since = ready_since(pod)
    return now - since if since is not None else 0.0


def ready_since(pod: Obj) -> float | None:
    """When the pod's Ready condition last became True (POSIX seconds), None if not ready."""
    condition = ready_condition(pod)
    if condition is None or condition.get("status") != "True":
        return None
    stamp = condition.get("lastTransitionTime")
    return parse_time(stamp).timestamp() if stamp else 0.0


def available_in(pod: Obj, *, min_ready: int, now: float) -> float | None:
    """Seconds until a ready pod becomes available (0: available now); None if not ready."""
    since = ready_since(pod)
    if since is None:
        return None
    return max(0.0, since + min_ready - now) if min_ready > 0 else 0.0
