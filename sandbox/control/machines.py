"""Cluster API Machines and the sandbox's infrastructure provider (`machine-controller`).

A real management cluster splits this between Cluster API's machine controller and a provider's
controllers (an instance per Machine, a kubelet that registers a Node). Here one controller plays
both, on the sandbox clock:
- a new Machine gets the `machine.cluster.x-k8s.io` finalizer and goes Provisioning once its
  Cluster exists (Pending, with a condition saying so, until then);
- its `infrastructureRef` must name a SandboxMachineTemplate in its namespace, or the Machine
  goes Failed (`InvalidConfiguration`) with a failureMessage saying what to point it at;
- `provisionSeconds` (template; default 60) after it went Provisioning, its instance is up: the
  Machine goes Failed (`CreateError`) when the world says instances of its pool fail
  (`machine-provision-fails`), else a Node named after the Machine joins (sandbox/control/
  joining.py builds it; Ready False when the world says so, `node-joins-not-ready`), the Machine
  gets `spec.providerID`, `status.nodeRef` and phase Running;
- while Running, `NodeHealthy` mirrors the Node's Ready condition (MachineSets count ready and
  available Machines from it); a Node that disappears fails the Machine, as in Cluster API;
- a deleted Machine goes Deleting: its Node is cordoned and drained with evictions that respect
  PodDisruptionBudgets (sandbox/control/draining.py; skipped with the
  `machine.cluster.x-k8s.io/exclude-node-draining` annotation), retried while a budget refuses,
  then the Node is deleted and the finalizer removed;
- Cluster API's deletion hooks hold that deletion while the Machine carries an annotation whose
  key starts with `pre-drain.delete.hook.machine.cluster.x-k8s.io` (before the cordon and drain;
  only for a Machine that has a Node) or `pre-terminate.delete.hook.machine.cluster.x-k8s.io`
  (after the drain, before the Node goes): the `PreDrainDeleteHookSucceeded` or
  `PreTerminateDeleteHookSucceeded` condition is False (`WaitingExternalHook`, naming the
  annotations) until their owner removes the last of them, which wakes the Machine again.
Events are those Cluster API records: SuccessfulSetNodeRef, SuccessfulDrainNode, FailedDrainNode.

Left out: bootstrap providers (a Machine needs no bootstrap data; `spec.bootstrap` is kept),
per-Machine infrastructure objects (`infrastructureRef` names the template itself), node drain
and deletion timeouts (a hook or a budget may hold a Machine forever), volume detachment, and
the version skew a kubelet newer than the control plane would meet.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sandbox.clock import parse_time
from sandbox.clusterapi.infrastructure import NOT_READY
from sandbox.clusterapi.vocabulary import (
    CLUSTERS,
    DRAINING_SUCCEEDED,
    EXCLUDE_NODE_DRAINING,
    INFRASTRUCTURE_GROUP,
    INFRASTRUCTURE_READY,
    MACHINE_FINALIZER,
    MACHINE_TEMPLATES,
    MACHINES,
    NODE_CLUSTER_NAMESPACE,
    NODE_HEALTHY,
    NODE_MACHINE,
    PRE_DRAIN_HOOK,
    PRE_DRAIN_HOOK_SUCCEEDED,
    PRE_TERMINATE_HOOK,
    PRE_TERMINATE_HOOK_SUCCEEDED,
    READY,
    TEMPLATE_KIND,
    WAITING_EXTERNAL_HOOK,
    MachinePhase,
    Severity,
    condition,
    find_condition,
    hooks_of,
    phase_of,
    pool_of,
)
from sandbox.control.draining import collect_orphans, drain
from sandbox.control.joining import node_for, provider_id
from sandbox.control.nodes import condition_of
from sandbox.control.rollout import set_condition
from sandbox.control.runtime import NODES, PODS, Context, Controller, Item
from sandbox.store import Change, Obj
from sandbox.world import Condition

DRAIN_RETRY = 20.0  # sandbox seconds before evicting again what a budget refused
DRAIN_POLL = 5.0  # look again this soon while evicted pods terminate


class MachineController(Controller):
    name = "machine-controller"
    primary = MACHINES
    watches = (NODES, CLUSTERS, PODS)

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._draining: dict[str, Item] = {}  # node -> the Machine whose deletion drains it

    def items_for(self, change: Change) -> Iterable[Item]:
        if change.key == MACHINES:
            yield (change.namespace, change.name)
        elif change.key == NODES:
            for node in (change.object, change.old):
                annotations = (node or {}).get("metadata", {}).get("annotations") or {}
                if annotations.get(NODE_MACHINE) and annotations.get(NODE_CLUSTER_NAMESPACE):
                    yield (annotations[NODE_CLUSTER_NAMESPACE], annotations[NODE_MACHINE])
        elif change.key == CLUSTERS:
            for machine in self.list(MACHINES, change.namespace):
                if (machine.get("spec") or {}).get("clusterName") == change.name:
                    yield (change.namespace, machine["metadata"]["name"])
        elif change.type == "DELETED":  # a pod gone from a Node being drained
            node = (change.object.get("spec") or {}).get("nodeName")
            if node in self._draining:
                yield self._draining[node]

    def reconcile(self, namespace: str, name: str) -> float | None:
        machine = self.get(MACHINES, namespace, name)
        if machine is None:
            return None
        if machine["metadata"].get("deletionTimestamp"):
            return self._delete(machine)
        finalizers = list(machine["metadata"].get("finalizers") or ())
        if MACHINE_FINALIZER not in finalizers:
            meta = {**machine["metadata"], "finalizers": [*finalizers, MACHINE_FINALIZER]}
            machine = self.write(MACHINES, {**machine, "metadata": meta}, machine)
        if phase_of(machine) == "Failed":
            return None  # terminal, as in Cluster API: delete the Machine to replace it
        if (machine.get("status") or {}).get("nodeRef"):
            return self._running(machine)
        return self._provision(machine)

    # -- provisioning ------------------------------------------------------------------------

    def _provision(self, machine: Obj) -> float | None:
        meta, spec = machine["metadata"], machine.get("spec") or {}
        template, problem = self._template(machine)
        if template is None:
            return self._fail(machine, "InvalidConfiguration", problem)
        cluster = str(spec.get("clusterName") or "")
        if self.get(CLUSTERS, meta["namespace"], cluster) is None:
            missing = f"Cluster {meta['namespace']}/{cluster} does not exist yet"
            reason = "WaitingForClusterInfrastructure"
            self._status(machine, "Pending", self._false(INFRASTRUCTURE_READY, reason, missing))
            return None
        shape = template["spec"]["template"]["spec"]
        seconds = float(shape["provisionSeconds"])
        if phase_of(machine) != "Provisioning":
            joins = f"provisioning: the node joins {seconds:g}s after it started"
            waiting = self._false(INFRASTRUCTURE_READY, "WaitingForInfrastructure", joins)
            self._status(machine, "Provisioning", waiting)
            return seconds
        started = parse_time(machine["status"]["lastUpdated"]).timestamp()
        left = started + seconds - self.now()
        if left > 1e-6:
            return left
        failure = self.ctx.world.infrastructure.provision_failure(pool_of(machine))
        if failure is not None:
            return self._fail(machine, failure.reason, failure.message)
        return self._join(machine, template)

    def _template(self, machine: Obj) -> tuple[Obj | None, str]:
        meta = machine["metadata"]
        ref = (machine.get("spec") or {}).get("infrastructureRef") or {}
        group = str(ref.get("apiVersion") or "").rpartition("/")[0]
        if ref.get("kind") != TEMPLATE_KIND or group != INFRASTRUCTURE_GROUP:
            return None, (
                f"infrastructureRef names a {ref.get('kind')} of {ref.get('apiVersion')}; the "
                f"sandbox provider builds machines from a {TEMPLATE_KIND} "
                f"({INFRASTRUCTURE_GROUP}): point infrastructureRef at one"
            )
        namespace = ref.get("namespace") or meta["namespace"]
        template = self.get(MACHINE_TEMPLATES, namespace, str(ref.get("name")))
        if template is None:
            return None, (
                f"{TEMPLATE_KIND} {namespace}/{ref.get('name')} not found: create it, or point "
                "infrastructureRef at an existing one"
            )
        return template, ""

    def _join(self, machine: Obj, template: Obj) -> float | None:
        name = machine["metadata"]["name"]
        existing = self.get(NODES, "", name)
        if existing is not None:
            owner = (existing["metadata"].get("annotations") or {}).get(NODE_MACHINE)
            if owner != name:
                return self._fail(
                    machine, "CreateError", f"a Node named {name} already exists: rename the Node"
                )
        else:
            world = self.ctx.world
            version = str((machine.get("spec") or {}).get("version") or "")
            ready = None
            if world.infrastructure.joins_not_ready(
                name, deployment=pool_of(machine), version=version
            ):
                ready = world.node(name).conditions["Ready"] = Condition(*NOT_READY)
            taken = {
                a.get("address")
                for n in self.list(NODES)
                for a in (n.get("status") or {}).get("addresses") or ()
            }
            node = node_for(
                machine, template, now=self.ctx.clock.timestamp(), taken=taken, ready=ready
            )
            existing = self.create(NODES, node)
        spec = {**(machine.get("spec") or {}), "providerID": provider_id(machine)}
        machine = self.write(MACHINES, {**machine, "spec": spec}, machine)
        self.event(machine, "SuccessfulSetNodeRef", name)
        return self._running(machine, existing)

    # -- running -----------------------------------------------------------------------------

    def _running(self, machine: Obj, node: Obj | None = None) -> float | None:
        name = node["metadata"]["name"] if node else machine["status"]["nodeRef"]["name"]
        node = node or self.get(NODES, "", name)
        if node is None:
            machine_name = machine["metadata"]["name"]
            message = f"Machine {machine_name} has attached Node {name} that cannot be found"
            return self._fail(machine, "InvalidConfiguration", message, event=False)
        ready = condition_of(node, "Ready") or {}
        if ready.get("status") == "True":
            healthy = self._true(NODE_HEALTHY)
        else:
            message = f"Node condition Ready is {ready.get('status', 'Unknown')}"
            if ready.get("message"):
                message += f": {ready['message']}"
            healthy = self._false(NODE_HEALTHY, "NodeConditionsFailed", message, "Warning")
        extra = {
            "nodeRef": {
                "apiVersion": "v1",
                "kind": "Node",
                "name": name,
                "uid": node["metadata"]["uid"],
            },
            "addresses": list((node.get("status") or {}).get("addresses") or ()),
            "nodeInfo": (node.get("status") or {}).get("nodeInfo") or {},
            "infrastructureReady": True,
        }
        infrastructure = self._true(INFRASTRUCTURE_READY)
        self._status(machine, "Running", infrastructure, healthy, extra=extra)
        return None

    # -- deletion ----------------------------------------------------------------------------

    def _delete(self, machine: Obj) -> float | None:
        if MACHINE_FINALIZER not in (machine["metadata"].get("finalizers") or ()):
            return None
        machine = self._status(machine, "Deleting")
        meta = machine["metadata"]
        node_name = ((machine.get("status") or {}).get("nodeRef") or {}).get("name")
        node = self.get(NODES, "", node_name) if node_name else None
        if node is not None and node_name is not None:
            machine, waiting = self._hooks(machine, PRE_DRAIN_HOOK, PRE_DRAIN_HOOK_SUCCEEDED)
            if waiting:
                return None  # the hook's owner removing its annotation wakes the Machine
            drained = (find_condition(machine, DRAINING_SUCCEEDED) or {}).get("status") == "True"
            if not drained and EXCLUDE_NODE_DRAINING not in (meta.get("annotations") or {}):
                self._draining[node_name] = (meta["namespace"], meta["name"])
                again = self._drain(machine, node)
                if again is not None:
                    return again
                machine = self.get(MACHINES, meta["namespace"], meta["name"]) or machine
        machine, waiting = self._hooks(machine, PRE_TERMINATE_HOOK, PRE_TERMINATE_HOOK_SUCCEEDED)
        if waiting:
            return None
        if node is not None and node_name is not None:
            self.delete(NODES, "", node_name)
            collect_orphans(self, node_name)
            self._draining.pop(node_name, None)
        meta = machine["metadata"]
        finalizers = [f for f in meta.get("finalizers") or () if f != MACHINE_FINALIZER]
        kept = {**meta, "finalizers": finalizers} if finalizers else dict(meta)
        if not finalizers:
            kept.pop("finalizers", None)
        self.write(MACHINES, {**machine, "metadata": kept}, machine)
        return None

    def _hooks(self, machine: Obj, prefix: str, kind: str) -> tuple[Obj, bool]:
        """The Machine with condition `kind` saying whether hooks of `prefix` hold it, and
        whether they do."""
        hooks = hooks_of(machine, prefix)
        if not hooks:
            return self._status(machine, "Deleting", self._true(kind)), False
        waiting = "waiting for the hook's owner to remove " + ", ".join(hooks)
        hold = self._false(kind, WAITING_EXTERNAL_HOOK, waiting)
        return self._status(machine, "Deleting", hold), True

    def _drain(self, machine: Obj, node: Obj) -> float | None:
        """None once the Node is drained, else seconds until the next try."""
        node_name = node["metadata"]["name"]
        result = drain(self, node)
        if result.blocked:
            message = f'error draining Machine\'s node "{node_name}": ' + "; ".join(result.blocked)
            self.event(machine, "FailedDrainNode", message, warning=True)
            failed = self._false(DRAINING_SUCCEEDED, "DrainingFailed", message, "Warning")
            self._status(machine, "Deleting", failed)
            return DRAIN_RETRY
        if result.terminating:
            waiting = "waiting for pods to terminate: " + ", ".join(result.terminating)
            self._status(machine, "Deleting", self._false(DRAINING_SUCCEEDED, "Draining", waiting))
            return DRAIN_POLL
        drained = f'success draining Machine\'s node "{node_name}"'
        self.event(machine, "SuccessfulDrainNode", drained)
        self._status(machine, "Deleting", self._true(DRAINING_SUCCEEDED))
        return None

    # -- status ------------------------------------------------------------------------------

    def _fail(self, machine: Obj, reason: str, message: str, *, event: bool = True) -> float | None:
        """Failed is terminal: nothing more to do until someone deletes the Machine. `event`:
        record a FailedCreate event (the Machine never became a Node)."""
        if event:
            self.event(machine, "FailedCreate", f"{reason}: {message}", warning=True)
        self._status(
            machine,
            "Failed",
            self._false(INFRASTRUCTURE_READY, reason, message, "Error"),
            extra={"failureReason": reason, "failureMessage": message},
        )
        return None

    def _true(self, kind: str) -> dict[str, Any]:
        return condition(kind, "True", stamp=self.ctx.clock.timestamp())

    def _false(
        self, kind: str, reason: str, message: str, severity: Severity = "Info"
    ) -> dict[str, Any]:
        stamp = self.ctx.clock.timestamp()
        return condition(
            kind, "False", stamp=stamp, reason=reason, message=message, severity=severity
        )

    def _status(
        self,
        machine: Obj,
        phase: MachinePhase,
        *conditions: dict[str, Any],
        extra: dict[str, Any] | None = None,
    ) -> Obj:
        """Write the phase (stamping `lastUpdated` when it moves), `extra` fields and
        `conditions`; Ready follows InfrastructureReady."""
        old = machine.get("status") or {}
        status: dict[str, Any] = {**old, **(extra or {}), "phase": phase, "bootstrapReady": True}
        status["observedGeneration"] = machine["metadata"].get("generation")
        if old.get("phase") != phase:
            status["lastUpdated"] = self.ctx.clock.timestamp()
        for found in conditions:
            status = set_condition(status, found)
            if found["type"] == INFRASTRUCTURE_READY:
                status = set_condition(status, {**found, "type": READY})
        return self.write_status(MACHINES, machine, status)


CONTROLLERS: tuple[type[Controller], ...] = (MachineController,)
