"""Node pools through Cluster API objects, as the controller tests and the kubectl tests build
them: a `Cluster`, a `SandboxMachineTemplate` and a `MachineDeployment` pointing at it (`pool`),
a `KubeadmControlPlane` for the sandbox's own control plane (`control_plane`), and what those
tests share on a `Simulation`: a pool already Ready (`ready_pool`) and a web Deployment for its
drains to move, readings (the pool's nodes, its machines, the control plane) and a merge patch,
since custom resources take no strategic merge patch.
"""

from __future__ import annotations

from typing import Any

from sandbox.objects import WriteOptions
from sandbox.registry import ResourceType
from sandbox.store import Obj
from tests.support.simulation import Simulation, condition

INFRASTRUCTURE = "infrastructure.cluster.x-k8s.io/v1beta1"
CLUSTER_API = "cluster.x-k8s.io/v1beta1"
CONTROL_PLANE_API = "controlplane.cluster.x-k8s.io/v1beta1"
POOL_LABEL = "node.cluster.x-k8s.io/pool"
UPGRADE_SECONDS = "sandbox.kubecrew.io/upgrade-seconds"
CONTROL_PLANE = "prod-control-plane"
# Kinds the Simulation's own table of plurals does not know.
_KEYS = {"kubeadmcontrolplanes": ("controlplane.cluster.x-k8s.io", "kubeadmcontrolplanes")}


def cluster(name: str = "prod", *, control_plane: str = "") -> Obj:
    """A Cluster; `control_plane` names the KubeadmControlPlane its controlPlaneRef points at."""
    spec: Obj = {}
    if control_plane:
        spec["controlPlaneRef"] = {
            "apiVersion": CONTROL_PLANE_API,
            "kind": "KubeadmControlPlane",
            "name": control_plane,
        }
    return {"apiVersion": CLUSTER_API, "kind": "Cluster", "metadata": {"name": name}, "spec": spec}


def control_plane(
    version: str = "v1.37.0",
    replicas: int = 1,
    *,
    name: str = CONTROL_PLANE,
    upgrade_seconds: float | None = None,
) -> Obj:
    """A KubeadmControlPlane as clusterctl generates one (its kubeadm configuration is kept, not
    read); `upgrade_seconds` sets how long the sandbox takes to roll it to a new version."""
    meta: Obj = {"name": name}
    if upgrade_seconds is not None:
        meta["annotations"] = {UPGRADE_SECONDS: f"{upgrade_seconds:g}"}
    return {
        "apiVersion": CONTROL_PLANE_API,
        "kind": "KubeadmControlPlane",
        "metadata": meta,
        "spec": {
            "replicas": replicas,
            "version": version,
            "machineTemplate": {
                "infrastructureRef": {
                    "apiVersion": INFRASTRUCTURE,
                    "kind": "SandboxMachineTemplate",
                    "name": "control-plane",
                },
            },
            "kubeadmConfigSpec": {
                "clusterConfiguration": {"apiServer": {"extraArgs": {"audit-log-maxage": "7"}}},
                "initConfiguration": {"nodeRegistration": {"name": "{{ ds.meta_data.hostname }}"}},
            },
        },
    }


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


# -- driving a simulation ----------------------------------------------------------------------


def ready_pool(replicas: int, **shape: Any) -> Simulation:
    """A cluster with no nodes but a pool of `replicas` machines, all joined and Ready."""
    sim = Simulation(nodes=0)
    sim.apply(pool(replicas=replicas, **shape))
    sim.run_for(60)
    assert len([n for n in pool_nodes(sim) if node_ready(n)]) == replicas
    return sim


def web(replicas: int, *, spread: bool = False) -> Obj:
    """A Deployment of nginx pods (one per node when `spread`)."""
    spec: dict[str, Any] = {"containers": [{"name": "web", "image": "nginx:1.27"}]}
    if spread:
        term = {
            "labelSelector": {"matchLabels": {"app": "web"}},
            "topologyKey": "kubernetes.io/hostname",
        }
        spec["affinity"] = {
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
        }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": spec},
        },
    }


def budgeted_web(replicas: int, *, min_available: int) -> list[Obj]:
    """web (pods that stop at once) and a PodDisruptionBudget keeping `min_available` of them."""
    deployment = web(replicas)
    deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 1
    budget = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web"},
        "spec": {"minAvailable": min_available, "selector": {"matchLabels": {"app": "web"}}},
    }
    return [deployment, budget]


def running_web(sim: Simulation) -> list[Obj]:
    return [
        p
        for p in sim.pods(app="web")
        if not p["metadata"].get("deletionTimestamp")
        and (condition(p, "Ready") or {}).get("status") == "True"
    ]


# -- reading a simulation ----------------------------------------------------------------------


def merge_patch(
    sim: Simulation, plural: str, name: str, patch: Obj, *, namespace: str = "default"
) -> Obj:
    obj, _ = sim.objects.patch(
        resource(sim, plural),
        namespace=namespace,
        name=name,
        patch_type="merge",
        patch=patch,
        opts=WriteOptions(field_manager="test"),
    )
    sim.cluster.store.commit()
    sim.settle()
    return obj


def resource(sim: Simulation, plural: str) -> ResourceType:
    key = _KEYS.get(plural)
    found = sim.cluster.registry.for_group(*key) if key else sim.rt(plural)
    assert found is not None, plural
    return found


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


def control_plane_of(sim: Simulation, name: str = CONTROL_PLANE) -> Obj:
    rt = resource(sim, "kubeadmcontrolplanes")
    found = sim.cluster.store.get(rt.key, "default", name)
    assert found is not None, name
    return found
