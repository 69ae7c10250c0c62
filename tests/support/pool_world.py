"""A cluster whose every node comes from a Cluster API pool, as the provisioning and pool
consolidation tests build it: `workers` (4 CPU, 16Gi) and `gpu` (8 CPU, 32Gi, one GPU, labelled
accelerator=nvidia and tainted nvidia.com/gpu=present:NoSchedule, scaled to zero and described by
the cluster-autoscaler's scale-from-zero annotations), pods asking for what a test needs in
namespace shop, and the readings those tests check the cluster by (a pool's replicas and Ready
nodes, where the pods run, how many the scheduler cannot place).

`nodeless` is the sandbox they run on: no node of its own, so every node is a pool's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sandbox.server import Options, Sandbox
from tests.support.clock import RATE
from tests.support.kubectl import Kubectl
from tests.support.machine_pools import POOL_LABEL, cluster, machine_deployment, template
from tests.support.waiting import eventually

ZERO = "capacity.cluster-autoscaler.kubernetes.io/"
MIN_SIZE = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"
MAX_SIZE = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


@contextmanager
def nodeless(home: Path) -> Iterator[Sandbox]:
    with Sandbox(Options(home=home, nodes=0, rate=RATE)) as running:
        yield running


def pools(
    kubectl: Kubectl,
    *,
    workers: int = 1,
    gpu_provision_seconds: int = 5,
    workers_annotations: dict[str, str] | None = None,
) -> None:
    """The two pools, `workers` machines Ready, and namespace shop."""
    gpu = machine_deployment("gpu", replicas=0, template_name="gpu-node")
    gpu["metadata"]["annotations"] = {
        ZERO + "cpu": "8", ZERO + "memory": "32Gi", ZERO + "gpu-count": "1",
        ZERO + "labels": "accelerator=nvidia", ZERO + "taints": "nvidia.com/gpu=present:NoSchedule",
    }  # fmt: skip
    pool = machine_deployment("workers", replicas=workers)
    pool["metadata"]["annotations"] = dict(workers_annotations or {})
    gpu_node = template(
        "gpu-node", provision_seconds=gpu_provision_seconds, cpu="8", memory="32Gi", gpus=1,
        labels={"accelerator": "nvidia"}, taints=[GPU_TAINT],
    )  # fmt: skip
    standard = template(provision_seconds=5, cpu="4", memory="16Gi")
    for obj in (cluster(), standard, gpu_node, pool, gpu):
        kubectl("apply", "-f", "-", input=json.dumps(obj))
    eventually(lambda: ready(kubectl, "workers") == workers, what=f"{workers} workers Ready")
    kubectl("create", "namespace", "shop")


def run(kubectl: Kubectl, name: str, *, replicas: int = 1, **asks: Any) -> None:
    """A Deployment in shop whose pods request `cpu` (and `gpu`, as a limit), with the
    `tolerations` and `nodeSelector` given."""
    resources: dict[str, Any] = {"requests": {"cpu": asks.get("cpu", "100m"), "memory": "64Mi"}}
    if "gpu" in asks:
        resources["limits"] = {"nvidia.com/gpu": asks["gpu"]}
    spec: dict[str, Any] = {
        "terminationGracePeriodSeconds": 1,
        "containers": [{"name": "app", "image": "nginx:1.27", "resources": resources}],
        **{k: asks[k] for k in ("tolerations", "nodeSelector") if k in asks},
    }
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "shop"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": spec},
        },
    }
    kubectl("apply", "-f", "-", input=json.dumps(deployment))


def pods(kubectl: Kubectl) -> list[dict[str, str]]:
    """Each pod of shop: its app, its node ("" unbound) and its phase."""
    return [
        {
            "app": p["metadata"]["labels"]["app"],
            "node": p["spec"].get("nodeName") or "",
            "phase": p["status"].get("phase") or "",
        }
        for p in kubectl.json("get", "pods", "-n", "shop")["items"]
    ]


def unschedulable(kubectl: Kubectl) -> int:
    return sum(
        1
        for p in kubectl.json("get", "pods", "-n", "shop")["items"]
        for c in p["status"].get("conditions") or []
        if c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable"
    )


def nodes(kubectl: Kubectl, pool: str) -> list[str]:
    listed = kubectl.json("get", "nodes", "-l", f"{POOL_LABEL}={pool}")["items"]
    return sorted(n["metadata"]["name"] for n in listed)


def ready(kubectl: Kubectl, pool: str) -> int:
    listed = kubectl.json("get", "nodes", "-l", f"{POOL_LABEL}={pool}")["items"]
    return sum(
        1
        for node in listed
        for c in node["status"].get("conditions") or []
        if c["type"] == "Ready" and c["status"] == "True"
    )


def replicas(kubectl: Kubectl, pool: str) -> int:
    return int(kubectl.json("get", "machinedeployment", pool)["spec"]["replicas"])


def machines(kubectl: Kubectl) -> list[str]:
    return sorted(m["metadata"]["name"] for m in kubectl.json("get", "machines")["items"])


def pool_of(kubectl: Kubectl, node: str) -> str:
    return str(kubectl.json("get", "node", node)["metadata"]["labels"].get(POOL_LABEL))
