"""The Node a Machine becomes when its sandbox instance joins the cluster.

Built on a default sandbox node (`bootstrap.node`) and shaped by the Machine and its
SandboxMachineTemplate (`spec.template.spec`), the way a cloud instance and its kubelet shape a
real Node:
- capacity and allocatable: the template's `cpu` and `memory`, 110 pods, and `nvidia.com/gpu`
  when `gpus` > 0;
- labels: the template's `labels`, the Machine's labels in the domains Cluster API syncs to
  Nodes (`node.cluster.x-k8s.io/...`, `node-role.kubernetes.io/...`), the pool label
  `node.cluster.x-k8s.io/pool=<MachineDeployment>`, and `node.kubernetes.io/instance-type`
  naming the template (the instance's shape, as a cloud names its instance types);
- taints: the template's `taints`;
- annotations naming the Machine, as Cluster API writes them (`cluster.x-k8s.io/machine`, ...);
- `spec.providerID`: `sandbox://<machine>`;
- `status.nodeInfo`: kubelet and kube-proxy at the Machine's `spec.version`, kernel, OS image and
  container runtime from the template;
- `status.declaredFeatures`: what a kubelet of that version declares when it registers
  (sandbox/kubelet/features.py), so after an upgrade wave the new nodes declare more;
- an InternalIP in 172.19.0.0/16 that no other node has;
- the Ready condition the world gives it (a node that joins not ready reports Ready False).

Plain functions of API objects: no store, no clock.
"""

from __future__ import annotations

from typing import Any

from sandbox import bootstrap
from sandbox.clusterapi.vocabulary import (
    CLUSTER_NAME,
    NODE_CLUSTER_NAMESPACE,
    NODE_MACHINE,
    NODE_OWNER_KIND,
    NODE_OWNER_NAME,
    POOL_LABEL,
    SET_NAME,
    SYNCED_LABEL_DOMAINS,
    labels_of,
    pool_of,
)
from sandbox.kubelet.features import with_declared
from sandbox.store import Obj
from sandbox.world import Condition

PROVIDER_ID_PREFIX = "sandbox://"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
GPU = "nvidia.com/gpu"


def provider_id(machine: Obj) -> str:
    return PROVIDER_ID_PREFIX + str(machine["metadata"]["name"])


def node_for(
    machine: Obj, template: Obj, *, now: str, taken: set[str], ready: Condition | None
) -> Obj:
    """The Node of `machine` built from its SandboxMachineTemplate `template`; `taken` holds the
    addresses other nodes have, `ready` the Ready condition the world forces (None: healthy)."""
    meta, spec = machine["metadata"], machine.get("spec") or {}
    shape = ((template.get("spec") or {}).get("template") or {}).get("spec") or {}
    name = meta["name"]
    node = bootstrap.node(name, clock_now=now)
    capacity = {
        **node["status"]["capacity"],
        "cpu": str(shape["cpu"]),
        "memory": str(shape["memory"]),
    }
    if int(shape.get("gpus") or 0) > 0:
        capacity[GPU] = str(shape["gpus"])
    version = str(spec.get("version") or node["status"]["nodeInfo"]["kubeletVersion"])
    info = {
        **node["status"]["nodeInfo"],
        "kubeletVersion": version,
        "kubeProxyVersion": version,
        "kernelVersion": shape["kernelVersion"],
        "osImage": shape["osImage"],
        "containerRuntimeVersion": shape["containerRuntimeVersion"],
    }
    status = {
        **with_declared({**node["status"], "nodeInfo": info}),
        "capacity": capacity,
        "allocatable": dict(capacity),
        "addresses": [
            {"type": "InternalIP", "address": free_address(taken)},
            {"type": "Hostname", "address": name},
        ],
        "conditions": [_forced(c, ready, now) for c in node["status"]["conditions"]],
    }
    node_spec: dict[str, Any] = {"providerID": provider_id(machine)}
    if shape.get("taints"):
        node_spec["taints"] = [dict(t) for t in shape["taints"]]
    node_meta = {
        **node["metadata"],
        "labels": _labels(machine, template, node["metadata"]["labels"], shape),
        "annotations": _annotations(machine),
    }
    return {**node, "metadata": node_meta, "spec": node_spec, "status": status}


def free_address(taken: set[str]) -> str:
    for index in range(250 * 256):
        address = f"172.19.{index // 250}.{index % 250 + 2}"
        if address not in taken:
            return address
    raise RuntimeError("no InternalIP left in 172.19.0.0/16 for another node")


def _labels(
    machine: Obj, template: Obj, defaults: dict[str, str], shape: dict[str, Any]
) -> dict[str, str]:
    synced = {
        key: value
        for key, value in labels_of(machine).items()
        if key.partition("/")[0] in SYNCED_LABEL_DOMAINS
    }
    labels = {**defaults, INSTANCE_TYPE: template["metadata"]["name"], **synced}
    labels.update({str(k): str(v) for k, v in (shape.get("labels") or {}).items()})
    if pool := pool_of(machine):
        labels[POOL_LABEL] = pool
    return labels


def _annotations(machine: Obj) -> dict[str, str]:
    meta = machine["metadata"]
    labels = labels_of(machine)
    annotations = {
        CLUSTER_NAME: str((machine.get("spec") or {}).get("clusterName") or ""),
        NODE_CLUSTER_NAMESPACE: meta["namespace"],
        NODE_MACHINE: meta["name"],
    }
    if labels.get(SET_NAME):
        annotations[NODE_OWNER_KIND] = "MachineSet"
        annotations[NODE_OWNER_NAME] = labels[SET_NAME]
    return annotations


def _forced(condition: dict[str, Any], ready: Condition | None, now: str) -> dict[str, Any]:
    if ready is None or condition["type"] != "Ready":
        return condition
    return {
        **condition,
        "status": ready.status,
        "reason": ready.reason,
        "message": ready.message,
        "lastTransitionTime": now,
    }
