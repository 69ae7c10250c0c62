"""What a fresh sandbox contains before anyone touches it, and what the cluster adds on its own.

The system namespaces, the `kubernetes` Service, the default RBAC roles and bindings, a default
StorageClass, N Ready nodes, and a `default` ServiceAccount in every namespace (the job of the
ServiceAccount controller in Kubernetes). Seeding is idempotent: a restarted sandbox with a state
file keeps what it has and only fills what is missing.
"""

from __future__ import annotations

from typing import Any

from sandbox.objects import Objects, WriteOptions
from sandbox.rbac import bootstrap_objects
from sandbox.registry import ResourceType
from sandbox.store import Obj

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
NODE_CAPACITY = {"cpu": "4", "memory": "16Gi", "pods": "110", "ephemeral-storage": "100Gi"}


def seed(objects: Objects, *, nodes: int) -> None:
    objects.on_commit.append(lambda rt, new, old: _default_service_account(objects, rt, new, old))
    for name in SYSTEM_NAMESPACES:
        _ensure(objects, _object("v1", "Namespace", name))
    for obj in bootstrap_objects():
        _ensure(objects, obj)
    _ensure(
        objects,
        _object(
            "storage.k8s.io/v1",
            "StorageClass",
            "standard",
            extra={
                "provisioner": "sandbox.kubecrew.io/hostpath",
                "reclaimPolicy": "Delete",
                "volumeBindingMode": "WaitForFirstConsumer",
                "allowVolumeExpansion": True,
            },
            annotations={"storageclass.kubernetes.io/is-default-class": "true"},
        ),
    )
    _ensure(
        objects,
        _object(
            "v1",
            "Service",
            "kubernetes",
            namespace="default",
            extra={
                "spec": {
                    "type": "ClusterIP",
                    "clusterIP": "10.96.0.1",
                    "ports": [{"name": "https", "port": 443, "targetPort": 6443}],
                }
            },
            labels={"component": "apiserver", "provider": "kubernetes"},
        ),
    )
    for index in range(1, nodes + 1):
        _ensure(objects, node(f"node-{index}", clock_now=objects.clock.timestamp()))


def node(name: str, *, clock_now: str) -> Obj:
    conditions = [
        {
            "type": t,
            "status": s,
            "reason": r,
            "message": m,
            "lastHeartbeatTime": clock_now,
            "lastTransitionTime": clock_now,
        }
        for t, s, r, m in (
            (
                "MemoryPressure",
                "False",
                "KubeletHasSufficientMemory",
                "kubelet has sufficient memory available",
            ),
            ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            (
                "PIDPressure",
                "False",
                "KubeletHasSufficientPID",
                "kubelet has sufficient PID available",
            ),
            ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
        )
    ]
    return _object(
        "v1",
        "Node",
        name,
        labels={
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            "node.kubernetes.io/instance-type": "sandbox.standard",
        },
        extra={
            "spec": {},
            "status": {
                "capacity": dict(NODE_CAPACITY),
                "allocatable": dict(NODE_CAPACITY),
                "conditions": conditions,
                "addresses": [
                    {"type": "InternalIP", "address": f"172.18.0.{_octet(name)}"},
                    {"type": "Hostname", "address": name},
                ],
                "nodeInfo": {
                    "kubeletVersion": "v1.37.0",
                    "kubeProxyVersion": "v1.37.0",
                    "containerRuntimeVersion": "containerd://2.1.0",
                    "osImage": "kubecrew sandbox",
                    "kernelVersion": "6.1.0-sandbox",
                    "operatingSystem": "linux",
                    "architecture": "amd64",
                    "machineID": name,
                    "systemUUID": name,
                    "bootID": name,
                },
            },
        },
    )


def _octet(name: str) -> int:
    digits = "".join(ch for ch in name if ch.isdigit())
    return (int(digits) % 250) + 2 if digits else 2


def _object(
    api_version: str,
    kind: str,
    name: str,
    *,
    namespace: str = "",
    extra: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> Obj:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, **(extra or {})}


def _ensure(objects: Objects, obj: Obj) -> None:
    rt = objects.registry.by_kind(obj["apiVersion"], obj["kind"])
    assert rt is not None, f"bootstrap kind {obj['kind']} is not registered"
    namespace = obj["metadata"].get("namespace", "")
    if objects.find(rt, namespace, obj["metadata"]["name"]) is None:
        objects.create(
            rt, obj, namespace=namespace, opts=WriteOptions(field_manager="sandbox-bootstrap")
        )


def _default_service_account(objects: Objects, rt: ResourceType, new: Obj, old: Obj | None) -> None:
    if rt.key != ("", "namespaces") or old is not None:
        return
    sa_type = objects.registry.by_kind("v1", "ServiceAccount")
    assert sa_type is not None
    name = new["metadata"]["name"]
    if objects.find(sa_type, name, "default") is None:
        objects.create(
            sa_type,
            _object("v1", "ServiceAccount", "default", namespace=name),
            namespace=name,
            opts=WriteOptions(field_manager="sandbox-serviceaccounts"),
        )
