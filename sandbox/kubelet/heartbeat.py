"""Node heartbeats (the kubelet's side of node health): Lease renewals and node conditions.

Every 10 s (sandbox) per node the kubelet renews its Lease `kube-node-lease/<node>`; every 60 s,
or at once when a condition changes, it posts the node's conditions with a fresh
`lastHeartbeatTime`. The conditions are the healthy set a real kubelet reports unless the
simulated world forces some (`world.node(name).conditions`: a type there replaces the healthy
one or adds a custom type such as `GPUHealthy`). A condition whose status changes gets a new
`lastTransitionTime` and the event a kubelet records (`NodeNotReady`, `NodeHasDiskPressure`, ...).

When `world.node(name).heartbeat` is False the kubelet is dead: nothing is renewed or posted,
and it is the node-lifecycle-controller's job to notice (sandbox/control/nodes.py). Faults that
change the world are picked up on the next 10 s tick at the latest.

Each post also carries `status.declaredFeatures`, the features the node's kubelet version
declares (sandbox/kubelet/features.py): a node registered without them, or whose list someone
overwrote, gets the right one at once. Capacity, allocatable, addresses and nodeInfo stay as
bootstrap registered them. This module knows nothing of pods (sandbox/kubelet/pods.py runs them)
or of taints.
"""

from __future__ import annotations

from typing import Any

from sandbox.clock import parse_time
from sandbox.control.runtime import NODES, Controller
from sandbox.kubelet.features import FIELD, with_declared
from sandbox.store import Key, Obj
from sandbox.world import Condition

LEASES: Key = ("coordination.k8s.io", "leases")
LEASE_NAMESPACE = "kube-node-lease"
LEASE_DURATION = 40
RENEW_PERIOD = 10.0  # sandbox seconds between Lease renewals
REPORT_PERIOD = 60.0  # sandbox seconds between status posts when nothing changed

HEALTHY: dict[str, Condition] = {
    "NetworkUnavailable": Condition("False", "RouteCreated", "RouteController created a route"),
    "MemoryPressure": Condition(
        "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"
    ),
    "DiskPressure": Condition("False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    "PIDPressure": Condition(
        "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"
    ),
    "Ready": Condition("True", "KubeletReady", "kubelet is posting ready status"),
}
# The event a kubelet records when a condition turns to a status: type -> {status: reason}.
TRANSITION_EVENTS = {
    "Ready": {"True": "NodeReady", "False": "NodeNotReady"},
    "MemoryPressure": {"True": "NodeHasInsufficientMemory", "False": "NodeHasSufficientMemory"},
    "DiskPressure": {"True": "NodeHasDiskPressure", "False": "NodeHasNoDiskPressure"},
    "PIDPressure": {"True": "NodeHasInsufficientPID", "False": "NodeHasSufficientPID"},
}


class NodeHeartbeat(Controller):
    name = "kubelet"
    primary = NODES

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._forced: dict[str, set[str]] = {}  # node -> custom condition types it posted

    def reconcile(self, namespace: str, name: str) -> float | None:
        node = self.get(NODES, "", name)
        if node is None:
            self._forced.pop(name, None)
            return None
        if not self.ctx.world.node(name).heartbeat:
            return RENEW_PERIOD  # dead: look again in case it comes back
        renew_in = self._renew(node)
        report_in = self._report(node)
        return min(renew_in, report_in)

    # -- the Lease -----------------------------------------------------------------------------

    def _renew(self, node: Obj) -> float:
        name = node["metadata"]["name"]
        now = self.now()
        lease = self.get(LEASES, LEASE_NAMESPACE, name)
        spec = {
            "holderIdentity": name,
            "leaseDurationSeconds": LEASE_DURATION,
            "renewTime": self.ctx.clock.micro_timestamp(),
        }
        if lease is None:
            owner = {
                "apiVersion": "v1",
                "kind": "Node",
                "name": name,
                "uid": node["metadata"]["uid"],
            }
            meta = {"name": name, "namespace": LEASE_NAMESPACE, "ownerReferences": [owner]}
            self.create(
                LEASES,
                {
                    "apiVersion": "coordination.k8s.io/v1",
                    "kind": "Lease",
                    "metadata": meta,
                    "spec": spec,
                },
            )
            return RENEW_PERIOD
        old = lease.get("spec") or {}
        renewed = parse_time(old["renewTime"]).timestamp() if old.get("renewTime") else None
        if renewed is not None and old.get("holderIdentity") == name:
            due = renewed + RENEW_PERIOD - now
            if due > 1e-6:
                return due
        self.write(LEASES, {**lease, "spec": {**old, **spec}}, lease)
        return RENEW_PERIOD

    # -- node status ---------------------------------------------------------------------------

    def _report(self, node: Obj) -> float:
        name = node["metadata"]["name"]
        status = node.get("status") or {}
        current = {c.get("type"): c for c in status.get("conditions") or ()}
        forced = self.ctx.world.node(name).conditions
        wanted = {**HEALTHY, **forced}
        dropped = self._forced.get(name, set()) - set(forced)  # custom faults that were cleared
        self._forced[name] = set(forced) - set(HEALTHY)
        now = self.now()
        ready = current.get("Ready") or {}
        beat = ready.get("lastHeartbeatTime")
        last = parse_time(beat).timestamp() if beat else None
        declaring = with_declared(status)
        changed = (
            dropped
            or declaring.get(FIELD) != status.get(FIELD)
            or any(
                (c.status, c.reason, c.message) != _said(current.get(kind))
                for kind, c in wanted.items()
            )
        )
        if not changed and last is not None and now - last < REPORT_PERIOD - 1e-6:
            return last + REPORT_PERIOD - now
        stamp = self.ctx.clock.timestamp()
        posted = []
        for kind, c in wanted.items():
            before = current.get(kind) or {}
            moved = before.get("status") != c.status
            posted.append(
                {
                    "type": kind,
                    "status": c.status,
                    "reason": c.reason,
                    "message": c.message,
                    "lastHeartbeatTime": stamp,
                    "lastTransitionTime": stamp
                    if moved
                    else before.get("lastTransitionTime", stamp),
                }
            )
            if moved and before:
                self._transition_event(node, kind, c.status)
        others = [
            c
            for c in status.get("conditions") or ()
            if c.get("type") not in wanted and c.get("type") not in dropped
        ]
        self.write_status(NODES, node, {**declaring, "conditions": posted + others})
        return REPORT_PERIOD

    def _transition_event(self, node: Obj, kind: str, status: str) -> None:
        reason = TRANSITION_EVENTS.get(kind, {}).get(status)
        if reason is None:
            return
        name = node["metadata"]["name"]
        self.ctx.events.record(
            node,
            reason=reason,
            message=f"Node {name} status is now: {reason}",
            component=self.name,
            host=name,
            warning=False,
        )


def _said(condition: dict[str, Any] | None) -> tuple[Any, Any, Any]:
    if condition is None:
        return (None, None, None)
    return (condition.get("status"), condition.get("reason"), condition.get("message"))


CONTROLLERS: tuple[type[Controller], ...] = (NodeHeartbeat,)
