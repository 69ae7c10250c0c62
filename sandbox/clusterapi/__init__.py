"""Cluster API in the sandbox: the management-cluster objects an agent scales and upgrades node
pools and the control plane with, and the sandbox as their in-memory infrastructure provider.

    vocabulary.py      keys, labels, annotations, finalizer, phases; when a Machine is ready
    schemas.py         the structural schemas and printer columns the registry serves them with
    webhooks.py        Cluster API's defaulting and validating webhooks, as an admission hook
    infrastructure.py  the simulated cloud (part of the world): failing instances, nodes that
                       join not ready

The kinds (`cluster.x-k8s.io/v1beta1` Cluster, MachineDeployment, MachineSet, Machine,
`controlplane.cluster.x-k8s.io/v1beta1` KubeadmControlPlane and
`infrastructure.cluster.x-k8s.io/v1beta1` SandboxMachineTemplate) are declared in the registry's
table beside the built-ins; their controllers are sandbox/control/clusters.py, controlplanes.py
(the sandbox's API server as the control plane), machinedeployments.py, machinesets.py and
machines.py (the provider).

This package holds data and rules only: no controller, no HTTP. `webhooks` is imported by
`sandbox.admission`, not from here, because it needs the object service whose registry imports
this package's schemas.
"""

from __future__ import annotations

from sandbox.clusterapi.infrastructure import Infrastructure, NotReadyJoins, ProvisionFailure
from sandbox.clusterapi.schemas import PRINTER_COLUMNS, SCHEMAS

__all__ = ["PRINTER_COLUMNS", "SCHEMAS", "Infrastructure", "NotReadyJoins", "ProvisionFailure"]
