"""The simulated cloud behind the sandbox's Cluster API provider: what happens to a Machine
between the provider asking for an instance and its Node joining.

It is part of the world (`World.infrastructure`): faults change it, the machine controller reads
it when a Machine's provisioning time is up (sandbox/control/machines.py). A matching
`ProvisionFailure` fails the Machine instead of creating its Node. A `NotReadyJoins` with slots
left makes the Node join with Ready False, as a kubelet whose network plugin never starts: the
slot is taken and the Node's name recorded, so clearing the fault knows which Nodes to heal.

Entries are keyed by the id of the fault that made them, so two faults undo cleanly in any
order. Plain data; knows nothing of the store, of faults or of controllers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# What the kubelet of a Node that joins not ready reports: (status, reason, message).
NOT_READY = (
    "False",
    "KubeletNotReady",
    "container runtime network not ready: NetworkReady=false "
    "reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized",
)


@dataclass(frozen=True)
class ProvisionFailure:
    """Instances of one MachineDeployment (None: of every one) fail to come up."""

    deployment: str | None
    reason: str
    message: str

    def matches(self, deployment: str) -> bool:
        return self.deployment is None or self.deployment == deployment


@dataclass
class NotReadyJoins:
    """The next `count` Nodes of a MachineDeployment and/or Kubernetes version join not ready."""

    deployment: str | None
    version: str | None
    count: int
    nodes: list[str] = field(default_factory=list)  # those that joined so

    def takes(self, deployment: str, version: str) -> bool:
        return (
            len(self.nodes) < self.count
            and self.deployment in (None, deployment)
            and self.version in (None, version)
        )


@dataclass
class Infrastructure:
    provision_failures: dict[str, ProvisionFailure] = field(default_factory=dict)  # by fault id
    not_ready_joins: dict[str, NotReadyJoins] = field(default_factory=dict)  # by fault id

    def provision_failure(self, deployment: str) -> ProvisionFailure | None:
        """The failure an instance of `deployment` meets, the oldest fault's first."""
        return next((f for f in self.provision_failures.values() if f.matches(deployment)), None)

    def joins_not_ready(self, node: str, *, deployment: str, version: str) -> bool:
        """Whether `node`, about to join, joins not ready (taking a slot of the oldest fault
        that has one left)."""
        for joins in self.not_ready_joins.values():
            if joins.takes(deployment, version):
                joins.nodes.append(node)
                return True
        return False

    def held_not_ready(self, node: str) -> bool:
        return any(node in joins.nodes for joins in self.not_ready_joins.values())
