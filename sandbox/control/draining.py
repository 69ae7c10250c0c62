"""Draining a Node before its Machine goes, as Cluster API's machine controller drains.

`drain` cordons the Node, then evicts each pod on it through the eviction subresource's own rules
(`sandbox.subresources.evict`, the code `kubectl drain` meets over HTTP), so a
PodDisruptionBudget that forbids an eviction leaves the pod running and the drain is tried again
later. DaemonSet pods and mirror pods are left alone, as with `kubectl drain
--ignore-daemonsets`; pods no controller owns are evicted too (Cluster API drains with force).
Each pass reports what it could not do yet: pods a budget protects, and pods still terminating
(the kubelet stops them within their grace period). The drain is over when neither is left.

`collect_orphans` deletes, at once, the pods still bound to a Node that is gone, as the pod
garbage collector does; DaemonSet pods and drain-excluded Nodes leave such pods behind.

Plain functions over a controller (its store, lifecycle and write path); no state of their own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sandbox.control.runtime import NODES, PODS, Controller
from sandbox.errors import ApiError
from sandbox.store import Obj
from sandbox.subresources import evict

MIRROR = "kubernetes.io/config.mirror"


@dataclass
class Drain:
    """What one pass over a Node left undone."""

    blocked: list[str] = field(default_factory=list)  # "ns/pod: why the eviction was refused"
    terminating: list[str] = field(default_factory=list)  # "ns/pod" still going

    @property
    def done(self) -> bool:
        return not self.blocked and not self.terminating


def drain(ctl: Controller, node: Obj) -> Drain:
    cordon(ctl, node)
    result = Drain()
    pods = ctl.rt(PODS)
    for pod in ctl.ctx.index.pods_on(node["metadata"]["name"]):
        meta = pod["metadata"]
        where = f"{meta['namespace']}/{meta['name']}"
        if skipped(pod):
            continue
        if meta.get("deletionTimestamp"):
            result.terminating.append(where)
            continue
        named = {"name": meta["name"], "namespace": meta["namespace"]}
        body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": named}
        try:
            evict(ctl.ctx.lifecycle, pods, pod, body)
        except ApiError as refused:
            causes = "; ".join(c.message for c in refused.causes)
            result.blocked.append(f"{where}: {refused.message}" + (f" {causes}" if causes else ""))
            continue
        if ctl.get(PODS, meta["namespace"], meta["name"]) is not None:
            result.terminating.append(where)
    return result


def cordon(ctl: Controller, node: Obj) -> Obj:
    spec = node.get("spec") or {}
    if spec.get("unschedulable"):
        return node
    return ctl.write(NODES, {**node, "spec": {**spec, "unschedulable": True}}, node)


def skipped(pod: Obj) -> bool:
    """DaemonSet pods and mirror pods: a drain leaves them where they are."""
    meta = pod["metadata"]
    if MIRROR in (meta.get("annotations") or {}):
        return True
    owners = meta.get("ownerReferences") or ()
    return any(ref.get("controller") and ref.get("kind") == "DaemonSet" for ref in owners)


def collect_orphans(ctl: Controller, node_name: str) -> None:
    """Delete at once the pods still bound to `node_name`, which no longer exists."""
    for pod in ctl.ctx.index.pods_on(node_name):
        meta = pod["metadata"]
        ctl.delete(PODS, meta["namespace"], meta["name"], grace=0)
