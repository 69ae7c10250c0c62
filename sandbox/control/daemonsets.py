"""The DaemonSet controller: one pod on every node the pod template fits.

A node is eligible when the template's nodeSelector and required node affinity match its labels
and the pod tolerates its NoSchedule and NoExecute taints; a pod already there stays as long as
it tolerates the NoExecute ones. Every daemon pod gets the tolerations Kubernetes adds to them
(not-ready and unreachable NoExecute without a time limit; disk, memory and PID pressure and
unschedulable NoSchedule; network-unavailable for hostNetwork pods) and a required node affinity
`matchFields metadata.name In [node]`, so the scheduler places it, as in Kubernetes. A template
change is a new revision (ControllerRevision, `controller-revision-hash` label); RollingUpdate
replaces old pods within `maxUnavailable`, OnDelete waits for people to delete them.

The controller watches nodes, but only their labels, taints and existence concern it: the
heartbeats that move node status every few seconds wake nothing here.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from sandbox.control.ownership import controller_ref, controller_uid
from sandbox.control.readiness import ready_for, ready_to_count
from sandbox.control.runtime import NODES, PODS, Controller, Item, items
from sandbox.control.statefulsets import REVISION_HASH, sync_revisions
from sandbox.jsoncopy import deep_copy
from sandbox.naming import random_suffix
from sandbox.store import Change, Key, Obj

DAEMONSETS: Key = ("apps", "daemonsets")
TEMPLATE_GENERATION = "pod-template-generation"

_AUTOMATIC = (
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
)
_HOST_NETWORK = ("node.kubernetes.io/network-unavailable", "NoSchedule")


class DaemonSetController(Controller):
    name = "daemonset-controller"
    primary = DAEMONSETS
    watches = (PODS, NODES)

    def items_for(self, change: Change) -> Iterable[Item]:
        if change.key != NODES:
            yield from super().items_for(change)
            return
        old, new = change.old or {}, change.object
        if change.type == "MODIFIED" and _placement(old) == _placement(new):
            return
        yield from items(self.list(DAEMONSETS))

    def reconcile(self, namespace: str, name: str) -> float | None:
        ds = self.get(DAEMONSETS, namespace, name)
        if ds is None or ds["metadata"].get("deletionTimestamp"):
            return None
        template = daemon_template(ds["spec"].get("template") or {})
        pods = self._pods(ds)
        in_use = {f"{name}-{p['metadata']['labels'].get(REVISION_HASH, '')}" for p in pods}
        revision, _ = sync_revisions(
            self, ds, ds["spec"].get("template") or {}, name=name, in_use=in_use
        )
        current_hash = revision.rsplit("-", 1)[-1]
        nodes = {n["metadata"]["name"]: n for n in self.list(NODES)}
        by_node: dict[str, list[Obj]] = defaultdict(list)
        for pod in pods:
            by_node[target_node(pod)].append(pod)
        wanted: list[str] = []
        for node_name in sorted(set(nodes) | set(by_node)):
            node = nodes.get(node_name)
            should_run, should_continue = fits(template, node) if node else (False, False)
            if should_run:
                wanted.append(node_name)
            self._sync_node(
                ds,
                node_name,
                by_node.get(node_name, []),
                should_run,
                should_continue,
                template,
                current_hash,
            )
        pods = self._pods(ds)
        if (ds["spec"].get("updateStrategy") or {}).get("type", "RollingUpdate") == "RollingUpdate":
            self._roll(ds, pods, wanted, current_hash)
        return self._write_status(ds, self._pods(ds), wanted, current_hash)

    # -- one node ----------------------------------------------------------------------------

    def _sync_node(
        self,
        ds: Obj,
        node: str,
        pods: list[Obj],
        should_run: bool,
        should_continue: bool,
        template: Obj,
        current_hash: str,
    ) -> None:
        alive = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
        if not should_run:
            if not should_continue:
                for pod in alive:
                    self._delete_pod(ds, pod)
            return
        for pod in [p for p in alive if (p.get("status") or {}).get("phase") == "Failed"]:
            self.event(
                ds,
                "FailedDaemonPod",
                f"Found failed daemon pod {pod['metadata']['namespace']}/"
                f"{pod['metadata']['name']} on node {node}, will try to kill it",
                warning=True,
            )
            self._delete_pod(ds, pod)
            alive.remove(pod)
        if not alive:
            self._create_pod(ds, node, template, current_hash)
            return
        keep = min(
            alive,
            key=lambda p: (
                p["metadata"]["labels"].get(REVISION_HASH) != current_hash,
                p["metadata"].get("creationTimestamp", ""),
            ),
        )
        for pod in alive:
            if pod is not keep:
                self._delete_pod(ds, pod)

    def _create_pod(self, ds: Obj, node: str, template: Obj, current_hash: str) -> None:
        meta = ds["metadata"]
        pod_meta: dict[str, Any] = {
            "namespace": meta["namespace"],
            "labels": {
                **((template.get("metadata") or {}).get("labels") or {}),
                REVISION_HASH: current_hash,
                TEMPLATE_GENERATION: str(meta.get("generation", 1)),
            },
            "ownerReferences": [controller_ref(ds)],
        }
        annotations = (template.get("metadata") or {}).get("annotations")
        if annotations:
            pod_meta["annotations"] = dict(annotations)
        rng = self.random(meta["namespace"], meta["name"], node, current_hash)
        while True:
            pod_meta["name"] = f"{meta['name']}-" + random_suffix(rng)
            if self.get(PODS, meta["namespace"], pod_meta["name"]) is None:
                break
        spec = deep_copy(template.get("spec") or {})
        spec["affinity"] = _pinned_affinity(spec.get("affinity"), node)
        pod = self.create(
            PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": spec}
        )
        self.event(ds, "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}")

    def _delete_pod(self, ds: Obj, pod: Obj) -> None:
        self.delete(PODS, pod["metadata"]["namespace"], pod["metadata"]["name"])
        self.event(ds, "SuccessfulDelete", f"Deleted pod: {pod['metadata']['name']}")

    def _pods(self, ds: Obj) -> list[Obj]:
        uid = ds["metadata"]["uid"]
        return [p for p in self.ctx.index.owned(PODS, uid) if controller_uid(p) == uid]

    # -- rolling update ----------------------------------------------------------------------

    def _roll(self, ds: Obj, pods: list[Obj], wanted: list[str], current_hash: str) -> None:
        rolling = (ds["spec"].get("updateStrategy") or {}).get("rollingUpdate") or {}
        budget = _scaled(rolling.get("maxUnavailable", 1), len(wanted)) or 1
        min_ready = int(ds["spec"].get("minReadySeconds") or 0)
        now = self.now()
        by_node: dict[str, list[Obj]] = defaultdict(list)
        for pod in pods:
            if not pod["metadata"].get("deletionTimestamp"):
                by_node[target_node(pod)].append(pod)
        unavailable, broken, candidates = 0, [], []
        for node in wanted:
            new = [
                p
                for p in by_node[node]
                if p["metadata"]["labels"].get(REVISION_HASH) == current_hash
            ]
            old = [p for p in by_node[node] if p not in new]
            available = [
                p for p in by_node[node] if ready_to_count(p) and ready_for(p, now) >= min_ready
            ]
            if old and not available:
                broken.extend(old)  # already unavailable: replacing it costs nothing
            elif old:
                candidates.extend(old)
            elif not available:
                unavailable += 1
        for pod in broken + candidates[: max(budget - unavailable - len(broken), 0)]:
            self._delete_pod(ds, pod)

    # -- status ------------------------------------------------------------------------------

    def _write_status(
        self, ds: Obj, pods: list[Obj], wanted: list[str], current_hash: str
    ) -> float | None:
        min_ready = int(ds["spec"].get("minReadySeconds") or 0)
        now = self.now()
        alive = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
        wanted_set = set(wanted)
        on_wanted = [p for p in alive if target_node(p) in wanted_set]
        ready = [p for p in on_wanted if ready_to_count(p)]
        available = [p for p in ready if ready_for(p, now) >= min_ready]
        status: dict[str, Any] = {
            "currentNumberScheduled": len({target_node(p) for p in on_wanted}),
            "numberMisscheduled": len({target_node(p) for p in alive} - wanted_set),
            "desiredNumberScheduled": len(wanted),
            "numberReady": len(ready),
            "observedGeneration": ds["metadata"].get("generation", 1),
            "updatedNumberScheduled": len(
                {
                    target_node(p)
                    for p in on_wanted
                    if p["metadata"]["labels"].get(REVISION_HASH) == current_hash
                }
            ),
            "numberAvailable": len(available),
            "numberUnavailable": max(len(wanted) - len(available), 0),
        }
        for omitted in ("updatedNumberScheduled", "numberAvailable", "numberUnavailable"):
            if not status[omitted]:
                del status[omitted]
        self.write_status(DAEMONSETS, ds, status)
        waiting = [min_ready - ready_for(p, now) for p in ready if p not in available]
        return max(min(waiting), 0.5) if waiting else None


# -- placement ---------------------------------------------------------------------------------


def daemon_template(template: Obj) -> Obj:
    """The pod template with the tolerations Kubernetes adds to every daemon pod."""
    spec = dict(template.get("spec") or {})
    tolerations = list(spec.get("tolerations") or [])
    automatic = [*_AUTOMATIC, *([_HOST_NETWORK] if spec.get("hostNetwork") else [])]
    for key, effect in automatic:
        if not any(t.get("key") == key and t.get("effect") == effect for t in tolerations):
            tolerations.append({"key": key, "operator": "Exists", "effect": effect})
    spec["tolerations"] = tolerations
    return {**template, "spec": spec}


def fits(template: Obj, node: Obj) -> tuple[bool, bool]:
    """(should run there, may keep running there) for a daemon pod of `template` on `node`."""
    spec = template.get("spec") or {}
    labels = node["metadata"].get("labels") or {}
    selector = spec.get("nodeSelector") or {}
    if any(labels.get(k) != v for k, v in selector.items()):
        return False, False
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    if required is not None and not any(
        _term_matches(term, node) for term in required.get("nodeSelectorTerms") or []
    ):
        return False, False
    tolerations = spec.get("tolerations") or []
    taints = (node.get("spec") or {}).get("taints") or []
    untolerated = {t.get("effect") for t in taints if not _tolerated(t, tolerations)}
    keep = "NoExecute" not in untolerated
    return keep and "NoSchedule" not in untolerated, keep


def _tolerated(taint: Obj, tolerations: list[Obj]) -> bool:
    for toleration in tolerations:
        if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
            continue
        if toleration.get("operator", "Equal") == "Exists":
            if not toleration.get("key") or toleration["key"] == taint.get("key"):
                return True
        elif toleration.get("key") == taint.get("key") and (
            toleration.get("value", "") == taint.get("value", "")
        ):
            return True
    return False


def _term_matches(term: Obj, node: Obj) -> bool:
    expressions = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not expressions and not fields:
        return False
    labels = node["metadata"].get("labels") or {}
    return all(_requirement(e, labels) for e in expressions) and all(
        _requirement(f, {"metadata.name": node["metadata"]["name"]}) for f in fields
    )


def _requirement(expr: Obj, values: dict[str, str]) -> bool:
    key, operator = expr.get("key", ""), expr.get("operator")
    wanted = [str(v) for v in expr.get("values") or []]
    have = values.get(key)
    if operator == "In":
        return have in wanted
    if operator == "NotIn":
        return have not in wanted
    if operator == "Exists":
        return have is not None
    if operator == "DoesNotExist":
        return have is None
    if operator in ("Gt", "Lt") and have is not None and wanted:
        try:
            left, right = int(have), int(wanted[0])
        except ValueError:
            return False
        return left > right if operator == "Gt" else left < right
    return False


def _pinned_affinity(affinity: Obj | None, node: str) -> Obj:
    """The pod's affinity with its required node terms replaced by `metadata.name In [node]`."""
    affinity = dict(affinity or {})
    node_affinity = dict(affinity.get("nodeAffinity") or {})
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
        ]
    }
    affinity["nodeAffinity"] = node_affinity
    return affinity


def target_node(pod: Obj) -> str:
    """The node a daemon pod is bound to or pinned to."""
    bound = (pod.get("spec") or {}).get("nodeName")
    if bound:
        return str(bound)
    required = (((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    for term in required.get("nodeSelectorTerms") or []:
        for field in term.get("matchFields") or []:
            if field.get("key") == "metadata.name" and field.get("values"):
                return str(field["values"][0])
    return ""


def _placement(node: Obj) -> tuple[Any, ...]:
    meta = node.get("metadata") or {}
    return meta.get("labels"), node.get("spec")


def _scaled(value: Any, total: int) -> int:
    if isinstance(value, str) and value.endswith("%"):
        return math.ceil(total * int(value[:-1]) / 100)
    return int(value or 0)


CONTROLLERS: tuple[type[Controller], ...] = (DaemonSetController,)
