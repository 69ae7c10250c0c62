"""Node lifecycle (`node-lifecycle-controller`): stale Leases, condition taints, NoExecute eviction.

Every 5 s (sandbox) per node the controller compares the node's Lease with what it saw last; a
Lease that has not moved for 40 s means the kubelet is gone, so the kubelet's conditions turn
`Unknown` ("Kubelet stopped posting node status."). From the conditions and `spec.unschedulable`
it keeps the well-known taints (`node.kubernetes.io/unreachable`, `not-ready`, the pressure
taints, `unschedulable`), each stamped with `timeAdded`, and removes them once the kubelet posts
healthy conditions again. When a node stops being Ready its pods' `Ready` condition turns False.
Pods that do not tolerate a NoExecute taint are deleted at once; pods that tolerate it for
`tolerationSeconds` are deleted when that time has passed since the taint's `timeAdded`.

Staleness is judged by when this controller *saw* the renewTime change, not by the renewTime
itself, as Kubernetes does: a restarted sandbox with old Leases gives its kubelets a full grace
period before declaring them lost.

The taint and toleration vocabulary (`tolerates`, the taint keys) lives here; the scheduler
imports it. This module knows nothing of how kubelets post status (sandbox/kubelet/heartbeat.py)
or of how pods are placed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sandbox.clock import format_time, parse_time
from sandbox.control.runtime import NODES, PODS, Controller
from sandbox.store import Key, Obj

LEASES: Key = ("coordination.k8s.io", "leases")
LEASE_NAMESPACE = "kube-node-lease"
CHECK_PERIOD = 5.0  # sandbox seconds between looks at one node's Lease
GRACE = 40.0  # a Lease unchanged for this long means the kubelet stopped

NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"
UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
PRESSURE_TAINTS = {
    "MemoryPressure": "node.kubernetes.io/memory-pressure",
    "DiskPressure": "node.kubernetes.io/disk-pressure",
    "PIDPressure": "node.kubernetes.io/pid-pressure",
    "NetworkUnavailable": "node.kubernetes.io/network-unavailable",
}
MANAGED_TAINTS = frozenset({NOT_READY, UNREACHABLE, UNSCHEDULABLE, *PRESSURE_TAINTS.values()})
KUBELET_CONDITIONS = ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")
UNKNOWN_REASON = "NodeStatusUnknown"
UNKNOWN_MESSAGE = "Kubelet stopped posting node status."


# -- taints and tolerations ----------------------------------------------------------------------


def tolerates(tolerations: Iterable[Mapping[str, Any]], taint: Mapping[str, Any]) -> bool:
    return any(_matches(toleration, taint) for toleration in tolerations)


def _matches(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if (toleration.get("operator") or "Equal") == "Exists":
        return not key or key == taint.get("key")
    return key == taint.get("key") and (toleration.get("value") or "") == (taint.get("value") or "")


def eviction_delay(tolerations: list[Mapping[str, Any]], taints: list[Obj]) -> float | None:
    """Seconds after its taint was added that a pod may stay on a node with these NoExecute
    taints: 0 when one is not tolerated, None when it may stay for good. As in Kubernetes, the
    shortest `tolerationSeconds` among the tolerations used wins."""
    used: list[Mapping[str, Any]] = []
    for taint in taints:
        matching = [t for t in tolerations if _matches(t, taint)]
        if not matching:
            return 0.0
        used.extend(matching)
    limits = [t["tolerationSeconds"] for t in used if t.get("tolerationSeconds") is not None]
    return float(max(min(limits), 0)) if limits else None


def condition_of(obj: Obj, kind: str) -> dict[str, Any] | None:
    for found in (obj.get("status") or {}).get("conditions") or ():
        if found.get("type") == kind:
            return dict(found)
    return None


# -- the controller ------------------------------------------------------------------------------


class NodeLifecycle(Controller):
    name = "node-lifecycle-controller"
    primary = NODES

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._probes: dict[str, tuple[str | None, float]] = {}  # node -> (renewTime, seen at)
        self._not_ready: set[str] = set()  # nodes whose pods were already marked not ready
        self._registered: set[str] = set()
        self._first_seen: dict[tuple[str, str, str], float] = {}  # taints without timeAdded

    def reconcile(self, namespace: str, name: str) -> float | None:
        node = self.get(NODES, "", name)
        if node is None:
            self._forget(name)
            return None
        if name not in self._registered:
            self._registered.add(name)
            self.event(
                node, "RegisteredNode", f"Node {name} event: Registered Node {name} in Controller"
            )
        node = self._check_lease(node)
        ready = (condition_of(node, "Ready") or {}).get("status", "Unknown")
        node = self._taint(node, ready)
        self._mark_pods(node, ready)
        wait = self._evict(node)
        return CHECK_PERIOD if wait is None else min(CHECK_PERIOD, wait)

    def _forget(self, name: str) -> None:
        self._probes.pop(name, None)
        self._not_ready.discard(name)
        self._registered.discard(name)
        for key in [k for k in self._first_seen if k[0] == name]:
            del self._first_seen[key]

    # -- leases -> conditions ------------------------------------------------------------------

    def _check_lease(self, node: Obj) -> Obj:
        name = node["metadata"]["name"]
        lease = self.get(LEASES, LEASE_NAMESPACE, name)
        renewed = ((lease or {}).get("spec") or {}).get("renewTime")
        now = self.now()
        seen = self._probes.get(name)
        if seen is None or seen[0] != renewed:
            seen = self._probes[name] = (renewed, now)
        if now - seen[1] <= GRACE:
            return node
        stamp = self.ctx.clock.timestamp()
        conditions = []
        for cond in (node.get("status") or {}).get("conditions") or ():
            if cond.get("type") in KUBELET_CONDITIONS and cond.get("status") != "Unknown":
                cond = {
                    **cond,
                    "status": "Unknown",
                    "reason": UNKNOWN_REASON,
                    "message": UNKNOWN_MESSAGE,
                    "lastTransitionTime": stamp,
                }
            conditions.append(cond)
        return self.write_status(NODES, node, {**node["status"], "conditions": conditions})

    # -- conditions -> taints ------------------------------------------------------------------

    def _taint(self, node: Obj, ready: str) -> Obj:
        wanted: list[tuple[str, str]] = []
        if ready == "Unknown":
            wanted += [(UNREACHABLE, "NoSchedule"), (UNREACHABLE, "NoExecute")]
        elif ready != "True":
            wanted += [(NOT_READY, "NoSchedule"), (NOT_READY, "NoExecute")]
        if (node.get("spec") or {}).get("unschedulable"):
            wanted.append((UNSCHEDULABLE, "NoSchedule"))
        for kind, key in PRESSURE_TAINTS.items():
            if (condition_of(node, kind) or {}).get("status") == "True":
                wanted.append((key, "NoSchedule"))
        current = list((node.get("spec") or {}).get("taints") or ())
        kept = [
            t
            for t in current
            if t.get("key") not in MANAGED_TAINTS or (t.get("key"), t.get("effect")) in wanted
        ]
        present = {(t.get("key"), t.get("effect")) for t in kept}
        stamp = self.ctx.clock.timestamp()
        added = [
            {"key": key, "effect": effect, "timeAdded": stamp}
            for key, effect in wanted
            if (key, effect) not in present
        ]
        taints = kept + added
        if taints == current:
            return node
        spec = {**node.get("spec", {}), "taints": taints}
        if not taints:
            spec.pop("taints")
        return self.write(NODES, {**node, "spec": spec}, node)

    # -- pods on a node that is not ready ------------------------------------------------------

    def _mark_pods(self, node: Obj, ready: str) -> None:
        name = node["metadata"]["name"]
        if ready == "True":
            self._not_ready.discard(name)
            return
        if name in self._not_ready:
            return
        self._not_ready.add(name)
        self.event(node, "NodeNotReady", f"Node {name} status is now: NodeNotReady")
        stamp = self.ctx.clock.timestamp()
        for pod in self.ctx.index.pods_on(name):
            status = pod.get("status") or {}
            conditions = status.get("conditions") or []
            if not any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions):
                continue
            marked = [
                {**c, "status": "False", "lastTransitionTime": stamp} if c["type"] == "Ready" else c
                for c in conditions
            ]
            self.write_status(PODS, pod, {**status, "conditions": marked})
            self.event(pod, "NodeNotReady", "Node is not ready", warning=True)

    # -- NoExecute taints -> evictions ---------------------------------------------------------

    def _evict(self, node: Obj) -> float | None:
        """Delete the pods whose time on this node is up; seconds until the next one is due."""
        name = node["metadata"]["name"]
        taints = [
            t
            for t in (node.get("spec") or {}).get("taints") or ()
            if t.get("effect") == "NoExecute"
        ]
        if not taints:
            return None
        now = self.now()
        since = max(self._added_at(name, t, now) for t in taints)
        soonest: float | None = None
        for pod in self.ctx.index.pods_on(name):
            if pod["metadata"].get("deletionTimestamp"):
                continue
            if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue
            delay = eviction_delay((pod.get("spec") or {}).get("tolerations") or [], taints)
            if delay is None:
                continue
            left = since + delay - now
            if left <= 0:
                self._evict_pod(pod)
            elif soonest is None or left < soonest:
                soonest = left
        return soonest

    def _added_at(self, node: str, taint: Obj, now: float) -> float:
        if stamp := taint.get("timeAdded"):
            return parse_time(stamp).timestamp()
        key = (node, str(taint.get("key")), str(taint.get("effect")))
        return self._first_seen.setdefault(key, now)

    def _evict_pod(self, pod: Obj) -> None:
        meta = pod["metadata"]
        status = pod.get("status") or {}
        target = {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": "DeletionByTaintManager",
            "message": "Taint manager: deleting due to NoExecute taint",
            "lastTransitionTime": format_time(self.ctx.clock.now()),
        }
        conditions = [c for c in status.get("conditions") or () if c["type"] != "DisruptionTarget"]
        pod = self.write_status(PODS, pod, {**status, "conditions": [*conditions, target]})
        self.event(
            pod,
            "TaintManagerEviction",
            f"Marking for deletion Pod {meta['namespace']}/{meta['name']}",
        )
        self.delete(PODS, meta["namespace"], meta["name"])


CONTROLLERS: tuple[type[Controller], ...] = (NodeLifecycle,)
