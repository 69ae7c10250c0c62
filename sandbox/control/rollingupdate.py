"""How far a Deployment's ReplicaSets may grow and shrink: RollingUpdate's arithmetic.

`maxSurge` rounds up and `maxUnavailable` down (both 0 would deadlock, so unavailable becomes 1);
Recreate surges by nothing. The new ReplicaSet grows up to the surge over all ReplicaSets'
sizes, and a Deployment scaled mid-rollout spreads the change over its active ReplicaSets in
proportion to their sizes against their `max-replicas` annotation, as Kubernetes does. Plain
functions of API objects, like `rollout.py` which they build on.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from sandbox.control.rollout import MAX_REPLICAS, replicas_of, resolve, status_count
from sandbox.store import Obj


def rolling(deploy: Obj) -> bool:
    return ((deploy.get("spec") or {}).get("strategy") or {}).get("type") != "Recreate"


def fenceposts(deploy: Obj) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) of a rolling Deployment; both 0 would deadlock: unavailable 1."""
    strategy = ((deploy.get("spec") or {}).get("strategy") or {}).get("rollingUpdate") or {}
    desired = replicas_of(deploy)
    surge = resolve(strategy.get("maxSurge", "25%"), desired, round_up=True)
    unavailable = resolve(strategy.get("maxUnavailable", "25%"), desired, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def max_surge(deploy: Obj) -> int:
    return fenceposts(deploy)[0] if rolling(deploy) else 0


def max_unavailable(deploy: Obj) -> int:
    desired = replicas_of(deploy)
    if not rolling(deploy) or desired == 0:
        return 0
    return min(fenceposts(deploy)[1], desired)


def available(rs: Obj) -> int:
    """Available pods of a ReplicaSet, never more than it is asked to keep (its status may still
    count pods a scale-down is about to remove)."""
    return min(status_count(rs, "availableReplicas"), replicas_of(rs))


def new_replicas(deploy: Obj, sets: list[Obj], new_rs: Obj | None) -> int:
    """How far the new ReplicaSet may grow now: up to the surge over all ReplicaSets' sizes."""
    desired = replicas_of(deploy)
    current = replicas_of(new_rs) if new_rs is not None else 0
    if not rolling(deploy):
        return desired
    ceiling = desired + max_surge(deploy)
    total = sum(replicas_of(rs) for rs in sets)
    if total >= ceiling:
        return current
    return current + min(ceiling - total, desired - current)


def proportional_sizes(deploy: Obj, active: list[Obj], status_replicas: int) -> list[int]:
    """New sizes for several active ReplicaSets when a Deployment is scaled mid-rollout: each
    gets its share of the change by its size against its `max-replicas` annotation, the
    rounding leftover goes to the largest. `active` comes sorted largest first."""
    desired = replicas_of(deploy)
    allowed = desired + max_surge(deploy) if desired > 0 else 0
    to_add = allowed - sum(replicas_of(rs) for rs in active)
    sizes = [replicas_of(rs) for rs in active]
    added = 0
    for i, rs in enumerate(active):
        if to_add == 0 or to_add == added or sizes[i] == 0:
            continue
        fraction = _fraction(rs, deploy, status_replicas)
        share = min(fraction, to_add - added) if to_add > 0 else max(fraction, to_add - added)
        sizes[i] += share
        added += share
    if active and added != to_add:
        sizes[0] = max(0, sizes[0] + to_add - added)
    return sizes


def _fraction(rs: Obj, deploy: Obj, status_replicas: int) -> int:
    size = replicas_of(rs)
    desired = replicas_of(deploy)
    if desired == 0:
        return -size
    annotated = annotation_int(rs, MAX_REPLICAS)
    base = annotated if annotated else status_replicas
    if not base:
        return 0
    return math.floor(size * (desired + max_surge(deploy)) / base + 0.5) - size


def annotation_int(obj: Obj, key: str) -> int | None:
    text = (obj["metadata"].get("annotations") or {}).get(key)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def by_creation(sets: Iterable[Obj]) -> list[Obj]:
    return sorted(
        sets, key=lambda rs: (rs["metadata"].get("creationTimestamp") or "", rs["metadata"]["name"])
    )
