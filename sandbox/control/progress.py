"""A Deployment's status and conditions: counts from its ReplicaSets, Available, Progressing
(with the progress deadline) and ReplicaFailure, as the deployment controller reports them.

Progress is estimated as Kubernetes does: a complete rollout says NewReplicaSetAvailable, any
count that moved says ReplicaSetUpdated (and moves `lastUpdateTime`), no progress past
`progressDeadlineSeconds` says ProgressDeadlineExceeded. Plain functions of API objects and the
times they are handed: the controller writes what they return.
"""

from __future__ import annotations

from typing import Any

from sandbox.clock import parse_time
from sandbox.control.rollingupdate import max_unavailable
from sandbox.control.rollout import (
    drop_condition,
    find_condition,
    replicas_of,
    set_condition,
    status_count,
)
from sandbox.store import Obj

NEVER = 2147483647  # progressDeadlineSeconds that means "no deadline" (math.MaxInt32)


def has_deadline(deploy: Obj) -> bool:
    deadline = (deploy.get("spec") or {}).get("progressDeadlineSeconds")
    return deadline is not None and int(deadline) != NEVER


def new_condition(kind: str, status: str, reason: str, message: str, stamp: str) -> Obj:
    return {
        "type": kind,
        "status": status,
        "lastUpdateTime": stamp,
        "lastTransitionTime": stamp,
        "reason": reason,
        "message": message,
    }


def complete(deploy: Obj, status: Obj) -> bool:
    """Every replica updated and available, and the latest spec observed."""
    desired = replicas_of(deploy)
    generation = int(deploy["metadata"].get("generation") or 0)
    return (
        status_count({"status": status}, "updatedReplicas") == desired
        and status_count({"status": status}, "replicas") == desired
        and status_count({"status": status}, "availableReplicas") == desired
        and int(status.get("observedGeneration") or 0) >= generation
    )


def deployment_status(deploy: Obj, sets: list[Obj], new_rs: Obj | None, *, stamp: str) -> Obj:
    """Counts from the ReplicaSets' status, the Available condition, other conditions kept."""
    old = deploy.get("status") or {}
    avail = sum(status_count(rs, "availableReplicas") for rs in sets)
    counts: dict[str, Any] = {
        "observedGeneration": deploy["metadata"].get("generation"),
        "replicas": sum(status_count(rs, "replicas") for rs in sets),
        "updatedReplicas": status_count(new_rs, "replicas") if new_rs is not None else 0,
        "readyReplicas": sum(status_count(rs, "readyReplicas") for rs in sets),
        "availableReplicas": avail,
        "unavailableReplicas": max(0, sum(replicas_of(rs) for rs in sets) - avail),
        "terminatingReplicas": sum(status_count(rs, "terminatingReplicas") for rs in sets),
    }
    status: Obj = {k: v for k, v in counts.items() if v}
    if old.get("conditions"):
        status["conditions"] = old["conditions"]
    if old.get("collisionCount"):
        status["collisionCount"] = old["collisionCount"]
    if avail >= replicas_of(deploy) - max_unavailable(deploy):
        cond = new_condition(
            "Available",
            "True",
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.",
            stamp,
        )
    else:
        cond = new_condition(
            "Available",
            "False",
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.",
            stamp,
        )
    return set_condition(status, cond)


def progress_status(deploy: Obj, status: Obj, new_rs: Obj | None, *, stamp: str, now: float) -> Obj:
    """The Progressing condition after a rollout step, as Kubernetes estimates progress:
    complete -> NewReplicaSetAvailable; any count moved -> ReplicaSetUpdated (lastUpdateTime
    moves); no progress past the deadline -> ProgressDeadlineExceeded. ReplicaFailure of the
    ReplicaSets is mirrored."""
    old = deploy.get("status") or {}
    if not has_deadline(deploy):
        status = drop_condition(status, "Progressing")
    current = find_condition(old, "Progressing")
    done = (
        status.get("replicas") == status.get("updatedReplicas")
        and current is not None
        and current.get("reason") == "NewReplicaSetAvailable"
    )
    target = (
        f'ReplicaSet "{new_rs["metadata"]["name"]}"'
        if new_rs
        else (f'Deployment "{deploy["metadata"]["name"]}"')
    )
    if has_deadline(deploy) and not done:
        if complete(deploy, status):
            cond = new_condition(
                "Progressing",
                "True",
                "NewReplicaSetAvailable",
                f"{target} has successfully progressed.",
                stamp,
            )
            status = set_condition(status, cond)
        elif _progressed(old, status):
            cond = new_condition(
                "Progressing", "True", "ReplicaSetUpdated", f"{target} is progressing.", stamp
            )
            status = set_condition(status, cond, force=True)
        elif timed_out(deploy, status, now=now):
            cond = new_condition(
                "Progressing",
                "False",
                "ProgressDeadlineExceeded",
                f"{target} has timed out progressing.",
                stamp,
            )
            status = set_condition(status, cond)
    return _replica_failure(status, new_rs, stamp)


def _progressed(old: Obj, new: Obj) -> bool:
    def count(status: Obj, field: str) -> int:
        return int(status.get(field) or 0)

    old_old = count(old, "replicas") - count(old, "updatedReplicas")
    new_old = count(new, "replicas") - count(new, "updatedReplicas")
    return (
        count(new, "updatedReplicas") > count(old, "updatedReplicas")
        or new_old < old_old
        or count(new, "readyReplicas") > count(old, "readyReplicas")
        or count(new, "availableReplicas") > count(old, "availableReplicas")
    )


def timed_out(deploy: Obj, status: Obj, *, now: float) -> bool:
    cond = find_condition(status, "Progressing")
    if cond is None or not has_deadline(deploy):
        return False
    if cond.get("reason") == "NewReplicaSetAvailable":
        return False
    if cond.get("reason") == "ProgressDeadlineExceeded":
        return True
    return _deadline(deploy, cond) < now


def recheck_after(deploy: Obj, status: Obj, *, now: float) -> float | None:
    """Seconds until the progress deadline would pass, when a rollout is still under way."""
    cond = find_condition(status, "Progressing")
    if cond is None or not has_deadline(deploy) or complete(deploy, status):
        return None
    if cond.get("reason") in ("ProgressDeadlineExceeded", "NewReplicaSetAvailable"):
        return None
    return max(0.0, _deadline(deploy, cond) - now) + 1.0


def _deadline(deploy: Obj, cond: Obj) -> float:
    stamp = cond.get("lastUpdateTime") or cond.get("lastTransitionTime")
    since = parse_time(stamp).timestamp() if stamp else 0.0
    return since + int((deploy.get("spec") or {}).get("progressDeadlineSeconds") or 0)


def _replica_failure(status: Obj, new_rs: Obj | None, stamp: str) -> Obj:
    failure = find_condition(new_rs.get("status") or {}, "ReplicaFailure") if new_rs else None
    if failure is None or failure.get("status") != "True":
        return drop_condition(status, "ReplicaFailure")
    cond = new_condition(
        "ReplicaFailure", "True", failure.get("reason", ""), failure.get("message", ""), stamp
    )
    return set_condition(status, cond)
