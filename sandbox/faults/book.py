"""The faults of one cluster: applied to its simulated world, scheduled, listed and cleared.

`Faults.add(dict)` validates a spec (`sandbox.faults.specs`), gives it an id (`f-3`) and applies it
now, or at its `at` (sandbox seconds after the cluster started) through a timer of the control
plane. Applying changes only `cluster.world`; clearing recomputes that part of the world from the
faults still active, so two faults on one node or one image undo cleanly in any order. After
each change the controllers that read that part of the world are asked to look again at once (the
store cannot tell them: the world is not in the store). The Cluster API faults fill
`world.infrastructure`, which the machine controller reads when a Machine's instance comes up:
nothing to wake then, and a node that joined not ready stays so until its fault is cleared. No
HTTP here (`sandbox.admin` serves this).

The book knows its cluster only as `ClusterParts`, the four parts it touches; `sandbox.cluster`
builds the book and passes itself, and this module does not import it. The parts are read at
each use, not kept: a test may swap the control plane (`cluster.control`) after construction.
"""

from __future__ import annotations

import builtins
import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from sandbox.clock import Clock
from sandbox.clusterapi.infrastructure import NOT_READY, NotReadyJoins, ProvisionFailure
from sandbox.clusterapi.vocabulary import MACHINE_DEPLOYMENTS
from sandbox.control.runtime import NODES as _NODES
from sandbox.control.runtime import Controller, Item, Manager
from sandbox.faults.specs import (
    API_RATES,
    ApiFault,
    AppProfile,
    FaultSpec,
    FaultSpecError,
    ImageMissing,
    MachineProvisionFails,
    NodeCondition,
    NodeHeartbeat,
    NodeJoinsNotReady,
    UnknownFault,
    describe,
    parse_spec,
)
from sandbox.store import Change, Obj, Store
from sandbox.world import Condition, World

State = Literal["scheduled", "active"]


class ClusterParts(Protocol):
    """What of a cluster the faults touch (`sandbox.cluster.Cluster` is one)."""

    clock: Clock
    world: World  # the only thing a fault changes
    store: Store  # read, to find the pods a change concerns
    control: Manager  # runs the timer of scheduled faults; asked to look again after a change


@dataclass(frozen=True)
class Fault:
    id: str
    kind: str  # as asked for: "memory-leak" stays "memory-leak" though it is an AppProfile
    spec: FaultSpec
    at: float | None = None
    state: State = "active"
    since: str | None = None  # when it took effect (RFC 3339, sandbox clock)

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"id": self.id, "kind": self.kind, "params": describe(self.spec)}
        body["state"] = self.state
        if self.at is not None:
            body["at"] = self.at
        if self.since is not None:
            body["since"] = self.since
        return body


class FaultTimer(Controller):
    """Applies scheduled faults when the sandbox clock reaches their `at` (item: ("", id))."""

    name = "sandbox-faults"
    primary = ("sandbox.kubecrew.io", "faults")  # not a stored kind: only timers wake it

    def __init__(self, faults: Faults) -> None:
        super().__init__(faults.cluster.control.ctx)
        self.faults = faults

    def items_for(self, change: Change) -> Iterable[Item]:
        return ()

    def resync(self) -> Iterable[Item]:
        return ()

    def reconcile(self, namespace: str, name: str) -> float | None:
        self.faults.fire(name)
        return None


class Faults:
    """The faults of one cluster: `add`, `clear`, `clear_all`, `list`, applied to its world."""

    def __init__(self, cluster: ClusterParts) -> None:
        self.cluster = cluster
        self.started = cluster.clock.seconds()  # `at` counts from here
        self._faults: dict[str, Fault] = {}
        self._overrides: dict[str, str] = {}  # fault id -> ProfileBook override id
        self._count = 0
        self._timer: FaultTimer | None = None

    def add(self, raw: Mapping[str, Any]) -> Fault:
        """Validate and apply (or schedule) one fault; raises FaultSpecError."""
        spec, at = parse_spec(raw)
        node = getattr(spec, "node", None)
        if (
            at is None
            and isinstance(node, str)
            and self.cluster.store.get(_NODES, "", node) is None
        ):
            # A scheduled fault may name a node that joins later; one in force now may not.
            known = ", ".join(
                sorted(n["metadata"]["name"] for n in self.cluster.store.list(_NODES))
            )
            raise FaultSpecError(str(raw["kind"]), "node", f"names no node here ({known})")
        deployment = getattr(spec, "deployment", None)
        if at is None and isinstance(deployment, str):
            self._check_deployment(str(raw["kind"]), deployment)
        self._count += 1
        fault = Fault(f"f-{self._count}", str(raw["kind"]), spec, at, state="scheduled")
        self._faults[fault.id] = fault
        delay = 0.0 if at is None else self.started + at - self.cluster.clock.seconds()
        if delay <= 0:
            self._activate(fault)
        else:
            self._schedule(fault.id, delay)
        return self._faults[fault.id]

    def _check_deployment(self, kind: str, name: str) -> None:
        """A fault in force now must name a MachineDeployment that exists (in any namespace)."""
        found = sorted(
            {md["metadata"]["name"] for md in self.cluster.store.list(MACHINE_DEPLOYMENTS)}
        )
        if name not in found:
            known = ", ".join(found) or "there are none"
            raise FaultSpecError(kind, "deployment", f"names no MachineDeployment here ({known})")

    def get(self, fault_id: str) -> Fault:
        fault = self._faults.get(fault_id)
        if fault is None:
            raise UnknownFault(fault_id)
        return fault

    def list(self) -> builtins.list[Fault]:
        return sorted(self._faults.values(), key=lambda f: int(f.id.split("-")[1]))

    def clear(self, fault_id: str) -> Fault:
        fault = self.get(fault_id)
        del self._faults[fault_id]
        if fault.state == "active":
            self._sync(fault)
        return fault

    def clear_all(self) -> builtins.list[Fault]:
        return [self.clear(fault.id) for fault in self.list()]

    def fire(self, fault_id: str) -> None:
        """A scheduled fault's time has come (a cleared one is gone, and stays gone)."""
        fault = self._faults.get(fault_id)
        if fault is not None and fault.state == "scheduled":
            self._activate(fault)

    # -- applying ---------------------------------------------------------------------------

    def _schedule(self, fault_id: str, delay: float) -> None:
        manager = self.cluster.control
        if self._timer is None:
            self._timer = FaultTimer(self)
            manager.add(self._timer)
        manager.after(self._timer, ("", fault_id), delay)

    def _activate(self, fault: Fault) -> None:
        since = self.cluster.clock.timestamp()
        self._faults[fault.id] = fault = dataclasses.replace(fault, state="active", since=since)
        self._sync(fault)

    def _active(self) -> builtins.list[Fault]:
        return [f for f in self.list() if f.state == "active"]

    def _sync(self, changed: Fault) -> None:
        """Make the world agree with the active faults in the part `changed` concerns."""
        spec, world = changed.spec, self.cluster.world
        if isinstance(spec, NodeHeartbeat | NodeCondition):
            self._sync_node(spec.node)
        elif isinstance(spec, ImageMissing):
            world.images.restore(spec.image)
            for fault in self._active():
                if isinstance(fault.spec, ImageMissing):
                    world.images.remove(fault.spec.image)
            self._poke_pods(lambda pod: _uses_image(pod, spec.image))
        elif isinstance(spec, AppProfile):
            override = self._overrides.pop(changed.id, None)
            if override is not None:
                world.profiles.clear(override)
            if changed.id in self._faults:
                self._overrides[changed.id] = world.profiles.override(
                    namespace=spec.namespace,
                    selector=dict(spec.selector) if spec.selector is not None else None,
                    image=spec.image,
                    changes=dict(spec.changes),
                )
            self._poke_pods(spec.matches)
        elif isinstance(spec, MachineProvisionFails | NodeJoinsNotReady):
            self._sync_infrastructure(changed.id, spec)
        else:
            rates = [f.spec for f in self._active() if isinstance(f.spec, ApiFault)]
            for name in API_RATES:  # several API faults: the worst of each rate
                setattr(world.api, name, max((getattr(r, name) for r in rates), default=0.0))

    def _sync_infrastructure(
        self, fault_id: str, spec: MachineProvisionFails | NodeJoinsNotReady
    ) -> None:
        """The cloud behind the Cluster API provider: failing instances, not-ready joins. The
        Nodes a cleared not-ready fault held down are made healthy again."""
        infrastructure = self.cluster.world.infrastructure
        active = fault_id in self._faults
        if isinstance(spec, MachineProvisionFails):
            infrastructure.provision_failures.pop(fault_id, None)
            if active:
                failure = ProvisionFailure(spec.deployment, spec.reason, spec.message)
                infrastructure.provision_failures[fault_id] = failure
        elif active:
            joins = NotReadyJoins(spec.deployment, spec.version, spec.count)
            infrastructure.not_ready_joins[fault_id] = joins
        else:
            held = infrastructure.not_ready_joins.pop(fault_id, None)
            for node in held.nodes if held is not None else ():
                self._sync_node(node)

    def _sync_node(self, node: str) -> None:
        world = self.cluster.world
        health = world.node(node)
        specs = [f.spec for f in self._active()]
        health.heartbeat = not any(isinstance(s, NodeHeartbeat) and s.node == node for s in specs)
        health.conditions = {
            s.type: s.condition() for s in specs if isinstance(s, NodeCondition) and s.node == node
        }
        if world.infrastructure.held_not_ready(node):
            health.conditions.setdefault("Ready", Condition(*NOT_READY))
        manager = self.cluster.control
        for name in ("kubelet", "node-lifecycle-controller"):
            manager.enqueue(name, ("", node))
        for pod in manager.ctx.index.pods_on(node):
            manager.enqueue("kubelet", (pod["metadata"]["namespace"], pod["metadata"]["name"]))

    def _poke_pods(self, concerns: Callable[[Obj], bool]) -> None:
        """Have the kubelet look again at once at the pods a changed world concerns."""
        manager = self.cluster.control
        for pod in self.cluster.store.list(("", "pods")):
            if concerns(pod):
                manager.enqueue("kubelet", (pod["metadata"]["namespace"], pod["metadata"]["name"]))


def _uses_image(pod: Obj, reference: str) -> bool:
    spec = pod.get("spec") or {}
    containers = [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]
    return any(reference in str(c.get("image", "")) for c in containers)
