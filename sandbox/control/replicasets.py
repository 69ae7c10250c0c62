"""The ReplicaSet controller: keeps `spec.replicas` pods of a template alive and reports them.

It creates missing pods from the template (slow start: batches of 1, 2, 4, ... that stop at the
first failure, as Kubernetes does so a broken template does not flood the API), deletes extras
starting with the least useful pod (unscheduled, pending, not ready, ready for less time, newer),
and writes `status` from the pods it controls: replicas, fullyLabeledReplicas, readyReplicas,
availableReplicas (ready for `minReadySeconds`) and the ReplicaFailure condition.

It knows pods only through the store and the owner Index; it knows nothing of Deployments (a
Deployment drives it by writing `spec.replicas` like any client) nor of nodes or the kubelet.
"""

from __future__ import annotations

from typing import Any

from sandbox.clock import parse_time
from sandbox.control.ownership import controlled_by, controller_ref
from sandbox.control.readiness import available_in, ready_since
from sandbox.control.rollout import (
    PODS,
    REPLICASETS,
    drop_condition,
    is_active,
    replicas_of,
    set_condition,
)
from sandbox.control.runtime import Context, Controller, Item
from sandbox.errors import ApiError
from sandbox.jsoncopy import deep_copy
from sandbox.store import Obj

RETRY = 10.0  # sandbox seconds before creating pods again after the API refused one
BURST = 500  # most pods created or deleted in one pass, as Kubernetes' burstReplicas
_PHASE_RANK = {"Pending": 0, "Unknown": 1, "Running": 2}


class ReplicaSetController(Controller):
    name = "replicaset-controller"
    primary = REPLICASETS
    watches = (PODS,)

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        # ReplicaSet -> (sandbox time, generation) before which creating pods is not retried
        self._retry_at: dict[Item, tuple[float, int]] = {}

    def reconcile(self, namespace: str, name: str) -> float | None:
        rs = self.get(REPLICASETS, namespace, name)
        if rs is None:
            self._retry_at.pop((namespace, name), None)
            return None
        uid = rs["metadata"]["uid"]
        owned = [p for p in self.ctx.index.owned(PODS, uid) if controlled_by(p, uid)]
        active = [p for p in owned if is_active(p)]
        failure: str | None = None
        if not rs["metadata"].get("deletionTimestamp"):
            active, failure = self._manage(rs, active)
        terminating = sum(1 for p in owned if p["metadata"].get("deletionTimestamp"))
        status, again = self._status(rs, active, terminating, failure)
        self.write_status(REPLICASETS, rs, status)
        waiting = self._retry_at.get((namespace, name))
        if waiting is not None:  # the API refused a pod: try again then, not in a hot loop
            retry = max(0.0, waiting[0] - self.now())
            return retry if again is None else min(again, retry)
        return again

    # -- pods ------------------------------------------------------------------------------------

    def _manage(self, rs: Obj, active: list[Obj]) -> tuple[list[Obj], str | None]:
        diff = replicas_of(rs) - len(active)
        item = (rs["metadata"]["namespace"], rs["metadata"]["name"])
        if diff <= 0:
            self._retry_at.pop(item, None)
        if diff > 0:
            generation = int(rs["metadata"].get("generation") or 0)
            waiting = self._retry_at.get(item)
            if waiting is not None and waiting[0] > self.now() and waiting[1] == generation:
                return active, ""  # the API refused a pod a moment ago: keep the condition
            self._retry_at.pop(item, None)
            created, failure = self._create(rs, min(diff, BURST))
            if failure is not None:
                self._retry_at[item] = (self.now() + RETRY, generation)
            return [*active, *created], failure
        if diff < 0:
            doomed = sorted(active, key=lambda p: _deletion_rank(p, self.now()))[
                : min(-diff, BURST)
            ]
            for pod in doomed:
                meta = pod["metadata"]
                self.delete(PODS, meta["namespace"], meta["name"])
                self.event(rs, "SuccessfulDelete", f"Deleted pod: {meta['name']}")
            gone = {p["metadata"]["name"] for p in doomed}
            return [p for p in active if p["metadata"]["name"] not in gone], None
        return active, None

    def _create(self, rs: Obj, count: int) -> tuple[list[Obj], str | None]:
        created: list[Obj] = []
        batch = 1
        while len(created) < count:
            for _ in range(min(batch, count - len(created))):
                try:
                    pod = self.create(PODS, _pod_for(rs))
                except ApiError as exc:
                    self.event(rs, "FailedCreate", f"Error creating: {exc.message}", warning=True)
                    return created, exc.message
                created.append(pod)
                self.event(rs, "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}")
            batch *= 2
        return created, None

    # -- status ----------------------------------------------------------------------------------

    def _status(
        self, rs: Obj, active: list[Obj], terminating: int, failure: str | None
    ) -> tuple[Obj, float | None]:
        spec = rs.get("spec") or {}
        min_ready = int(spec.get("minReadySeconds") or 0)
        wanted = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        now = self.now()
        ready = available = labeled = 0
        again: float | None = None
        for pod in active:
            labels = pod["metadata"].get("labels") or {}
            labeled += all(labels.get(k) == v for k, v in wanted.items())
            wait = available_in(pod, min_ready=min_ready, now=now)
            if wait is None:
                continue
            ready += 1
            if wait <= 0:
                available += 1
            else:  # look again when this pod has been ready long enough to count as available
                again = wait if again is None else min(again, wait)
        old = rs.get("status") or {}
        counts: dict[str, Any] = {
            "replicas": len(active),
            "fullyLabeledReplicas": labeled,
            "readyReplicas": ready,
            "availableReplicas": available,
            "terminatingReplicas": terminating,
            "observedGeneration": rs["metadata"].get("generation"),
        }
        status: Obj = {k: v for k, v in counts.items() if v or k == "replicas"}
        if old.get("conditions"):
            status["conditions"] = old["conditions"]
        status = self._failure_condition(status, failure)
        return status, again

    def _failure_condition(self, status: Obj, failure: str | None) -> Obj:
        """None: no failure (the condition goes); "": waiting to retry (kept as it is)."""
        if failure is None:
            return drop_condition(status, "ReplicaFailure")
        if not failure:
            return status
        stamp = self.ctx.clock.timestamp()
        cond = {
            "type": "ReplicaFailure",
            "status": "True",
            "lastTransitionTime": stamp,
            "reason": "FailedCreate",
            "message": failure,
        }
        return set_condition(status, cond)


def _pod_for(rs: Obj) -> Obj:
    meta = rs["metadata"]
    template = deep_copy((rs.get("spec") or {}).get("template") or {})
    template_meta = template.get("metadata") or {}
    pod_meta: Obj = {
        "generateName": f"{meta['name']}-",
        "namespace": meta["namespace"],
        "labels": template_meta.get("labels") or {},
        "ownerReferences": [controller_ref(rs)],
    }
    for carried in ("annotations", "finalizers"):
        if template_meta.get(carried):
            pod_meta[carried] = template_meta[carried]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": template["spec"]}


def _deletion_rank(pod: Obj, now: float) -> tuple[int, int, int, float, int, float, str]:
    """Sort key putting the pod to delete first: unscheduled before scheduled, pending before
    running, not ready before ready, ready for less time first, more restarts first, newer first."""
    spec, status, meta = pod.get("spec") or {}, pod.get("status") or {}, pod["metadata"]
    since = ready_since(pod)
    restarts = sum(int(c.get("restartCount") or 0) for c in status.get("containerStatuses") or ())
    created = meta.get("creationTimestamp")
    return (
        1 if spec.get("nodeName") else 0,
        _PHASE_RANK.get(status.get("phase") or "Pending", 0),
        0 if since is None else 1,
        -(since if since is not None else now),
        -restarts,
        -_stamp(created),
        meta["name"],
    )


def _stamp(text: str | None) -> float:
    return parse_time(text).timestamp() if text else 0.0


CONTROLLERS: tuple[type[Controller], ...] = (ReplicaSetController,)
