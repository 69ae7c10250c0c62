"""The scheduler (`default-scheduler`): binds each pending pod to a node, or says why it cannot.

A pod is placed in Kubernetes' filter-then-score shape. Filters run per node in the real
plugin order and the first that fails gives the node's reasons: NodeUnschedulable, taints,
node affinity/selector, node declared features (the pod's required features against the node's
`status.declaredFeatures`), host ports, resource fit (requests vs `status.allocatable`, init
containers and sidecars counted as Kubernetes computes effective requests), volume node
affinity, then inter-pod affinity and anti-affinity (including existing pods' anti-affinity).
Feasible nodes are scored (least allocated, balanced allocation, spreading pods of the same
owner, preferred node affinity, PreferNoSchedule taints) and ties are broken by a generator
seeded with the pod's uid, so runs are reproducible and replicas spread.

When no node fits, the pod gets `PodScheduled=False/Unschedulable` and a `FailedScheduling`
event whose message counts reasons per node exactly as kube-scheduler words them, followed by
the preemption verdict (this scheduler never preempts). Unschedulable pods are kept in a set and
retried when something that could help happens (a pod leaves a node, a node's schedulable
shape changes, its declared features included, a claim they wait for changes) and every 60 s
otherwise.

PersistentVolumeClaims: a missing claim or an unbound claim with Immediate binding makes the pod
unschedulable; a Pending claim of a WaitForFirstConsumer class gets the annotation
`volume.kubernetes.io/selected-node` for the chosen node, and the pod is bound once the
claim is Bound (the persistentvolume-controller provisions in between).

This module is the controller: work items, the decision, and what it writes. The parts it puts
together live in `sandbox.control.scheduling` (requests, the cache of nodes and placed pods,
affinity, volume binding, filters, scoring). It knows nothing of kubelets or controllers that
create pods.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from sandbox.control.ownership import controller_uid
from sandbox.control.runtime import NODES, PODS, Controller, Item
from sandbox.control.scheduling.affinity import required_terms
from sandbox.control.scheduling.cache import Cache, item_of
from sandbox.control.scheduling.filters import (
    failure_message,
    node_reasons,
    nodes_with_free_ports,
    whole_message,
)
from sandbox.control.scheduling.interpod import forbidden_by_existing, placement
from sandbox.control.scheduling.requests import Ask
from sandbox.control.scheduling.scoring import best_nodes
from sandbox.control.scheduling.volumebinding import Claims, claims_of
from sandbox.control.volumes import PVCS, SELECTED_NODE
from sandbox.store import Change, Obj

RETRY = 60.0  # sandbox seconds between attempts for a pod nothing else wakes
NAMES = ("", "default-scheduler")


class Scheduler(Controller):
    name = "default-scheduler"
    primary = PODS
    watches = (NODES, PVCS)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cache = Cache()
        self._unschedulable: dict[Item, None] = {}
        self._wants_affinity: dict[Item, None] = {}  # unschedulable for lack of pod affinity
        self._claim_waiters: dict[tuple[str, str], dict[Item, None]] = {}
        self._last_failure: dict[Item, tuple[str, float]] = {}
        for node in self.ctx.store.list(NODES):
            self.cache.see_node(node)
        for pod in self.ctx.store.list(PODS):
            self.cache.account(item_of(pod), pod)

    # -- work items ----------------------------------------------------------------------------

    def resync(self) -> Iterable[Item]:
        return [item_of(p) for p in self.ctx.store.list(PODS) if _pending(p)]

    def items_for(self, change: Change) -> Iterator[Item]:
        item = (change.namespace, change.name)
        if change.key == PODS:
            pod = None if change.type == "DELETED" else change.object
            freed, bound = self.cache.account(item, pod)
            if pod is not None and _pending(pod):
                yield item
            else:
                self._forget(item)
            if freed:
                yield from list(self._unschedulable)
            elif bound:
                yield from list(self._wants_affinity)
        elif change.key == NODES:
            old = self.cache.nodes.get(change.name)
            if change.type == "DELETED":
                self.cache.drop_node(change.name)
                return
            new = self.cache.see_node(change.object)
            if old is None or old.shape() != new.shape():
                yield from list(self._unschedulable)
        elif change.key == PVCS:
            yield from list(self._claim_waiters.get(item, ()))

    def _forget(self, item: Item) -> None:
        self._unschedulable.pop(item, None)
        self._wants_affinity.pop(item, None)
        self._last_failure.pop(item, None)
        for key in [k for k, waiters in self._claim_waiters.items() if item in waiters]:
            del self._claim_waiters[key][item]
            if not self._claim_waiters[key]:
                del self._claim_waiters[key]

    # -- one decision --------------------------------------------------------------------------

    def reconcile(self, namespace: str, name: str) -> float | None:
        pod = self.get(PODS, namespace, name)
        if pod is None or not _pending(pod):
            self._forget((namespace, name))
            return None
        if (pod.get("spec") or {}).get("schedulingGates"):
            self._set_condition(
                pod, "SchedulingGated", "Scheduling is blocked due to non-empty scheduling gates"
            )
            return None
        claims = claims_of(self, pod, self.cache.nodes)
        for claim_name in claims.names:
            self._claim_waiters.setdefault((namespace, claim_name), {})[(namespace, name)] = None
        if claims.waiting:
            return None
        total = len(self.cache.nodes)
        if claims.problem:
            return self._unschedulable_pod(pod, whole_message(claims.problem, total))
        ask = Ask.of(pod)
        feasible, reasons = self._filter(pod, ask, claims)
        if not feasible:
            return self._unschedulable_pod(pod, failure_message(reasons, total), affinity=True)
        chosen = self._pick(pod, ask, feasible)
        if claims.delayed:
            for claim in claims.delayed:
                self._select_node(claim, chosen)
            return None
        self._bind(pod, chosen)
        return None

    def _filter(self, pod: Obj, ask: Ask, claims: Claims) -> tuple[list[str], dict[str, list[str]]]:
        cache = self.cache
        rules = placement(self, cache, pod)
        forbidden = forbidden_by_existing(self, cache, pod) if cache.anti else set()
        free_ports = nodes_with_free_ports(self, cache.nodes, pod)
        feasible: list[str] = []
        reasons: dict[str, list[str]] = {}
        for name in sorted(cache.nodes):
            why = node_reasons(
                ask,
                cache.nodes[name],
                used=cache.used.get(name),
                pinned=claims.pinned,
                placement=rules,
                forbidden=forbidden,
                free_ports=free_ports,
            )
            if why:
                reasons[name] = why
            else:
                feasible.append(name)
        return feasible, reasons

    def _pick(self, pod: Obj, ask: Ask, feasible: list[str]) -> str:
        """The best-scoring feasible node; equal scores are settled by the pod's seeded dice."""
        if len(feasible) == 1:
            return feasible[0]
        top = best_nodes(ask, feasible, self.cache, owner=controller_uid(pod) or "")
        return self.random(pod["metadata"].get("uid", ""), "node").choice(top)

    # -- writing the outcome -------------------------------------------------------------------

    def _bind(self, pod: Obj, node: str) -> None:
        meta = pod["metadata"]
        status = pod.get("status") or {}
        conditions = [c for c in status.get("conditions") or () if c["type"] != "PodScheduled"]
        scheduled = {
            "type": "PodScheduled",
            "status": "True",
            "lastProbeTime": None,
            "lastTransitionTime": self.ctx.clock.timestamp(),
        }
        bound = {
            **pod,
            "spec": {**pod["spec"], "nodeName": node},
            "status": {**status, "conditions": [scheduled, *conditions]},
        }
        written = self.write(PODS, bound, pod)
        self.event(
            written,
            "Scheduled",
            f"Successfully assigned {meta['namespace']}/{meta['name']} to {node}",
        )

    def _unschedulable_pod(self, pod: Obj, message: str, *, affinity: bool = False) -> float:
        item = item_of(pod)
        self._unschedulable[item] = None
        if affinity and required_terms(pod.get("spec") or {}, "podAffinity"):
            self._wants_affinity[item] = None
        pod = self._set_condition(pod, "Unschedulable", message)
        now = self.now()
        last = self._last_failure.get(item)
        if last is None or last[0] != message or now - last[1] >= RETRY - 1e-6:
            self._last_failure[item] = (message, now)
            self.event(pod, "FailedScheduling", message, warning=True)
        return RETRY

    def _set_condition(self, pod: Obj, reason: str, message: str) -> Obj:
        status = pod.get("status") or {}
        conditions = list(status.get("conditions") or ())
        old = next((c for c in conditions if c["type"] == "PodScheduled"), None)
        since = self.ctx.clock.timestamp()
        if old is not None and old.get("status") == "False":
            since = old.get("lastTransitionTime") or since
        condition = {
            "type": "PodScheduled",
            "status": "False",
            "reason": reason,
            "message": message,
            "lastProbeTime": None,
            "lastTransitionTime": since,
        }
        rest = [c for c in conditions if c["type"] != "PodScheduled"]
        return self.write_status(PODS, pod, {**status, "conditions": [condition, *rest]})

    def _select_node(self, claim: Obj, node: str) -> None:
        meta = claim["metadata"]
        annotations = {**(meta.get("annotations") or {}), SELECTED_NODE: node}
        self.write(PVCS, {**claim, "metadata": {**meta, "annotations": annotations}}, claim)


def _pending(pod: Obj) -> bool:
    spec = pod.get("spec") or {}
    return (
        not spec.get("nodeName")
        and not pod["metadata"].get("deletionTimestamp")
        and (spec.get("schedulerName") or "") in NAMES
        and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
    )


CONTROLLERS: tuple[type[Controller], ...] = (Scheduler,)
