"""What the Deployment and ReplicaSet controllers share: pod counting, template hashes, revisions.

Kept here because both controllers (and the tests that check them) must agree on the same
definitions: when a pod counts toward a controller's replicas, how `pod-template-hash` is derived
from a pod template, how a revision number is read from a ReplicaSet, how an int-or-percent
rounds, and how a condition is replaced without moving its `lastTransitionTime` needlessly.
When a pod is ready or available is `readiness.py`'s; what only a Deployment needs is
`rollingupdate.py` (sizes) and `progress.py` (status and conditions). Only plain functions of
API objects live here: no store, no clock, no controller state.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import orjson

from sandbox.naming import spell
from sandbox.store import Key, Obj

PODS: Key = ("", "pods")
REPLICASETS: Key = ("apps", "replicasets")
DEPLOYMENTS: Key = ("apps", "deployments")

HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
CHANGE_CAUSE = "kubernetes.io/change-cause"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
# Deployment annotations that describe the Deployment itself, never copied to its ReplicaSets.
NOT_COPIED = frozenset({LAST_APPLIED, REVISION, REVISION_HISTORY, DESIRED_REPLICAS, MAX_REPLICAS})

# The alphabet Kubernetes encodes generated name parts with (no vowels, no look-alikes).


# -- pods ------------------------------------------------------------------------------------------


def is_active(pod: Obj) -> bool:
    """Counts toward a controller's replicas: not terminating and not finished."""
    if pod["metadata"].get("deletionTimestamp"):
        return False
    return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


# -- templates and revisions ---------------------------------------------------------------------


def template_hash(template: Obj, collision_count: int = 0) -> str:
    """A stable short name part for a pod template, like Kubernetes' `pod-template-hash`.

    FNV-1a (32 bit) over the template's canonical JSON and the collision count, its decimal
    form spelled in the safe alphabet: only the characters Kubernetes' hashes use.
    """
    data = orjson.dumps(template, option=orjson.OPT_SORT_KEYS)
    if collision_count:
        data += str(collision_count).encode()
    value = 0x811C9DC5
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return spell(value)


def without_hash(template: Obj) -> Obj:
    """The template as the Deployment holds it: the `pod-template-hash` label taken out."""
    meta = template.get("metadata") or {}
    labels = meta.get("labels") or {}
    if HASH_LABEL not in labels:
        return template
    rest = {k: v for k, v in labels.items() if k != HASH_LABEL}
    new_meta = (
        {**meta, "labels": rest} if rest else {k: v for k, v in meta.items() if k != "labels"}
    )
    return {**template, "metadata": new_meta}


def with_label(template: Obj, key: str, value: str) -> Obj:
    meta = template.get("metadata") or {}
    return {**template, "metadata": {**meta, "labels": {**(meta.get("labels") or {}), key: value}}}


def revision_of(obj: Obj) -> int:
    text = ((obj["metadata"].get("annotations") or {}).get(REVISION)) or "0"
    try:
        return int(text)
    except ValueError:
        return 0


def max_revision(sets: Iterable[Obj]) -> int:
    return max((revision_of(rs) for rs in sets), default=0)


# -- rollout arithmetic ----------------------------------------------------------------------------


def resolve(value: Any, total: int, *, round_up: bool) -> int:
    """An int-or-percent against `total` (percentages of surge round up, of unavailable down)."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    text = str(value).strip()
    if text.endswith("%"):
        try:
            share = int(text[:-1]) * total / 100
        except ValueError:
            return 0
        return math.ceil(share) if round_up else math.floor(share)
    try:
        return int(text)
    except ValueError:
        return 0


def replicas_of(obj: Obj) -> int:
    found = (obj.get("spec") or {}).get("replicas")
    return 1 if found is None else int(found)


def status_count(obj: Obj, field: str) -> int:
    return int((obj.get("status") or {}).get(field) or 0)


# -- conditions ----------------------------------------------------------------------------------


def find_condition(status: Obj, kind: str) -> Obj | None:
    for cond in status.get("conditions") or ():
        if cond.get("type") == kind:
            return dict(cond)
    return None


def set_condition(status: Obj, new: Obj, *, force: bool = False) -> Obj:
    """Status with `new` in place of the condition of its type, as Kubernetes sets conditions:
    unchanged when status and reason are the same (unless `force`), `lastTransitionTime` kept
    while the status stays the same. The replaced condition moves to the end of the list."""
    current = find_condition(status, new["type"])
    if current is not None and not force and current_same(current, new):
        return status
    if current is not None and current.get("status") == new.get("status"):
        new = {**new, "lastTransitionTime": current.get("lastTransitionTime")}
    kept = [c for c in status.get("conditions") or () if c.get("type") != new["type"]]
    return {**status, "conditions": [*kept, new]}


def current_same(current: Obj, new: Obj) -> bool:
    return current.get("status") == new.get("status") and current.get("reason") == new.get("reason")


def drop_condition(status: Obj, kind: str) -> Obj:
    conditions = status.get("conditions") or []
    kept = [c for c in conditions if c.get("type") != kind]
    if len(kept) == len(conditions):
        return status
    if kept:
        return {**status, "conditions": kept}
    return {k: v for k, v in status.items() if k != "conditions"}
