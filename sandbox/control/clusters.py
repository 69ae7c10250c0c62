"""Cluster API Clusters (`cluster-controller`): the sandbox is the workload cluster, so every
Cluster is provisioned as soon as it exists.

A real Cluster waits for its infrastructure (networks, a load balancer) and its control plane (a
KubeadmControlPlane or a managed one). Here the API server the agent talks to is the control
plane, so the controller only reports it: phase Provisioned, `infrastructureReady` and
`controlPlaneReady` true, and the InfrastructureReady, ControlPlaneReady and Ready conditions.

Left out: ClusterClass topologies (`spec.topology` is kept, not acted on), control-plane and
infrastructure references (kept, not followed: a KubeadmControlPlane named by
`controlPlaneRef` labels itself with the Cluster, sandbox/control/controlplanes.py, and the
Cluster reports ready whatever it says), `spec.paused`, and the Cluster's finalizer:
deleting a Cluster deletes its MachineDeployments through the owner references their
controller adds, and their Machines drain after the Cluster is gone.
"""

from __future__ import annotations

from typing import Any

from sandbox.clusterapi.vocabulary import CLUSTERS, condition
from sandbox.control.rollout import set_condition
from sandbox.control.runtime import Controller


class ClusterController(Controller):
    name = "cluster-controller"
    primary = CLUSTERS

    def reconcile(self, namespace: str, name: str) -> float | None:
        cluster = self.get(CLUSTERS, namespace, name)
        if cluster is None or cluster["metadata"].get("deletionTimestamp"):
            return None
        status: dict[str, Any] = {
            **(cluster.get("status") or {}),
            "phase": "Provisioned",
            "infrastructureReady": True,
            "controlPlaneReady": True,
            "observedGeneration": cluster["metadata"].get("generation"),
        }
        stamp = self.ctx.clock.timestamp()
        for kind in ("InfrastructureReady", "ControlPlaneReady", "Ready"):
            status = set_condition(status, condition(kind, "True", stamp=stamp))
        self.write_status(CLUSTERS, cluster, status)
        return None


CONTROLLERS: tuple[type[Controller], ...] = (ClusterController,)
