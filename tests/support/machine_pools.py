"""Node pools through Cluster API objects, as the controller tests and the kubectl tests build
them: a `Cluster`, a `SandboxMachineTemplate` and a `MachineDeployment` pointing at it (`pool`),
and the readings those tests share on a `Simulation` (the pool's nodes, its machines, a merge
patch, since custom resources take no strategic merge patch).
"""

from __future__ import annotations

from typing import Any

from sandbox.objects import WriteOptions
from sandbox.store import Obj
from tests.support.simulation import Simulation, condition

INFRASTRUCTURE = "infrastructure.cluster.x-k8s.io/v1beta1"
CLUSTER_API = "cluster.x-k8s.io/v1beta1"
POOL_LABEL = "node.cluster.x-k8s.io/pool"


def cluster(name: str = "prod") -> Obj:
    return {"apiVersion": CLUSTER_API, "kind": "Cluster", "metadata": {"name": name}, "spec": {}}


def template(name: str = "standard", *, provision_seconds: int = 60, **shape: Any) -> Obj:
    return {
        "apiVersion": INFRASTRUCTURE,
        "kind": "SandboxMachineTemplate",
        "metadata": {"name": name},
        "spec": {"template": {"spec": {"provisionSeconds": provision_seconds, **shape}}},
    }


def machine_deployment(
    name: str = "workers",
    *,
    replicas: int = 2,
    version: str = "v1.37.0",
    template_name: str = "standard",
    cluster_name: str = "prod",
) -> Obj:
    return {
        "apiVersion": CLUSTER_API,
        "kind": "MachineDeployment",
        "metadata": {"name": name},
        "spec": {
            "clusterName": cluster_name,
            "replicas": replicas,
            "template": {
                "spec": {
                    "clusterName": cluster_name,
                    "version": version,
                    "bootstrap": {"dataSecretName": f"{name}-bootstrap"},
                    "infrastructureRef": {
                        "apiVersion": INFRASTRUCTURE,
                        "kind": "SandboxMachineTemplate",
                        "name": template_name,
                    },
                },
            },
        },
    }


def pool(
    *, replicas: int = 2, provision_seconds: int = 60, version: str = "v1.37.0", **shape: Any
) -> list[Obj]:
    """A Cluster `prod` with one MachineDeployment `workers` of `replicas` machines."""
    return [
        cluster(),
        template(provision_seconds=provision_seconds, **shape),
        machine_deployment(replicas=replicas, version=version),
    ]


# -- reading a simulation ----------------------------------------------------------------------


def merge_patch(
    sim: Simulation, plural: str, name: str, patch: Obj, *, namespace: str = "default"
) -> Obj:
    obj, _ = sim.objects.patch(
        sim.rt(plural),
        namespace=namespace,
        name=name,
        patch_type="merge",
        patch=patch,
        opts=WriteOptions(field_manager="test"),
    )
    sim.cluster.store.commit()
    sim.settle()
    return obj


def scale(sim: Simulation, replicas: int, *, name: str = "workers") -> None:
    merge_patch(sim, "machinedeployments", name, {"spec": {"replicas": replicas}})


def pool_nodes(sim: Simulation, pool_name: str = "workers") -> list[Obj]:
    return [n for n in sim.list("nodes") if n["metadata"]["labels"].get(POOL_LABEL) == pool_name]


def node_ready(node: Obj) -> bool:
    found = condition(node, "Ready")
    return found is not None and found["status"] == "True"


def machines(sim: Simulation, *, phase: str | None = None) -> list[Obj]:
    found = sim.list("machines", "default")
    return [m for m in found if phase is None or (m.get("status") or {}).get("phase") == phase]


def machine_deployment_status(sim: Simulation, name: str = "workers") -> dict[str, Any]:
    md = sim.get("machinedeployments", "default", name)
    assert md is not None, name
    status: dict[str, Any] = md.get("status") or {}
    return status
