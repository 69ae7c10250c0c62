"""Server-side Tables for configuration, storage and access kinds: the columns and cells
`kubectl get` prints for PersistentVolumeClaims, PersistentVolumes, ConfigMaps, Secrets,
ServiceAccounts, StorageClasses, Leases, PriorityClasses, ResourceQuotas, RBAC roles and
bindings, CustomResourceDefinitions and LimitRanges (the "Created At" kinds), and the Name/Age
fallback for kinds kubectl has no printer for; as Kubernetes 1.37 does.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.sandbox.table_objects import (
    Json,
    check_columns_and_cells,
    meta,
)

KIND_CASES = [
    pytest.param(
        "",
        "PersistentVolumeClaim",
        {
            "metadata": meta("data"),
            "spec": {
                "volumeName": "pv-1",
                "storageClassName": "standard",
                "resources": {"requests": {"storage": "5Gi"}},
            },
            "status": {
                "phase": "Bound",
                "capacity": {"storage": "10Gi"},
                "accessModes": ["ReadWriteMany", "ReadWriteOnce"],
            },
        },
        [
            "Name",
            "Status",
            "Volume",
            "Capacity",
            "Access Modes",
            "StorageClass",
            "VolumeAttributesClass",
            "Age",
        ],
        ["VolumeMode"],
        {
            "Status": "Bound",
            "Volume": "pv-1",
            "Capacity": "10Gi",
            "Access Modes": "RWO,RWX",
            "StorageClass": "standard",
            "VolumeAttributesClass": "<unset>",
            "VolumeMode": "Filesystem",
        },
        id="pvc",
    ),
    pytest.param(
        "",
        "PersistentVolume",
        {
            "metadata": meta("pv-1", namespace=None),
            "spec": {
                "capacity": {"storage": "10Gi"},
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "standard",
                "persistentVolumeReclaimPolicy": "Delete",
                "claimRef": {"namespace": "default", "name": "data"},
            },
            "status": {"phase": "Bound"},
        },
        [
            "Name",
            "Capacity",
            "Access Modes",
            "Reclaim Policy",
            "Status",
            "Claim",
            "StorageClass",
            "VolumeAttributesClass",
            "Reason",
            "Age",
        ],
        ["VolumeMode"],
        {
            "Capacity": "10Gi",
            "Access Modes": "RWO",
            "Reclaim Policy": "Delete",
            "Claim": "default/data",
            "Reason": "",
        },
        id="pv",
    ),
    pytest.param(
        "",
        "ConfigMap",
        {"metadata": meta("cfg"), "data": {"a": "1", "b": "2"}, "binaryData": {"c": "AA=="}},
        ["Name", "Data", "Age"],
        [],
        {"Data": 3},
        id="configmap",
    ),
    pytest.param(
        "",
        "Secret",
        {
            "metadata": meta("creds"),
            "type": "kubernetes.io/tls",
            "data": {"tls.crt": "x", "tls.key": "y"},
        },
        ["Name", "Type", "Data", "Age"],
        [],
        {"Type": "kubernetes.io/tls", "Data": 2},
        id="secret",
    ),
    pytest.param(
        "",
        "ServiceAccount",
        {"metadata": meta("default")},
        ["Name", "Secrets", "Age"],
        [],
        {"Secrets": 0},
        id="serviceaccount",
    ),
    pytest.param(
        "storage.k8s.io",
        "StorageClass",
        {
            "metadata": meta(
                "standard",
                namespace=None,
                annotations={"storageclass.kubernetes.io/is-default-class": "true"},
            ),
            "provisioner": "rancher.io/local-path",
            "volumeBindingMode": "WaitForFirstConsumer",
        },
        [
            "Name",
            "Provisioner",
            "ReclaimPolicy",
            "VolumeBindingMode",
            "AllowVolumeExpansion",
            "Age",
        ],
        [],
        {
            "Name": "standard (default)",
            "ReclaimPolicy": "Delete",
            "VolumeBindingMode": "WaitForFirstConsumer",
            "AllowVolumeExpansion": False,
        },
        id="storageclass",
    ),
    pytest.param(
        "coordination.k8s.io",
        "Lease",
        {"metadata": meta("kube-scheduler"), "spec": {"holderIdentity": "cp-1_abc"}},
        ["Name", "Holder", "Age"],
        [],
        {"Holder": "cp-1_abc"},
        id="lease",
    ),
    pytest.param(
        "scheduling.k8s.io",
        "PriorityClass",
        {"metadata": meta("critical", namespace=None), "value": 1000000},
        ["Name", "Value", "Global-Default", "Age", "PreemptionPolicy"],
        [],
        {"Value": 1000000, "Global-Default": False, "PreemptionPolicy": "PreemptLowerPriority"},
        id="priorityclass",
    ),
    pytest.param(
        "",
        "ResourceQuota",
        {
            "metadata": meta("compute"),
            "status": {
                "hard": {"requests.cpu": "4", "limits.memory": "8Gi", "pods": "10"},
                "used": {"requests.cpu": "500m", "pods": "3"},
            },
        },
        ["Name", "Request", "Limit", "Age"],
        [],
        {"Request": "pods: 3/10, requests.cpu: 500m/4", "Limit": "limits.memory: 0/8Gi"},
        id="resourcequota",
    ),
    pytest.param(
        "rbac.authorization.k8s.io",
        "RoleBinding",
        {
            "metadata": meta("edit"),
            "roleRef": {"kind": "ClusterRole", "name": "edit"},
            "subjects": [
                {"kind": "User", "name": "ann"},
                {"kind": "Group", "name": "devs"},
                {"kind": "ServiceAccount", "namespace": "ci", "name": "bot"},
                {"kind": "User", "name": "bo"},
            ],
        },
        ["Name", "Role", "Age"],
        ["Users", "Groups", "ServiceAccounts"],
        {
            "Role": "ClusterRole/edit",
            "Users": "ann, bo",
            "Groups": "devs",
            "ServiceAccounts": "ci/bot",
        },
        id="rolebinding",
    ),
    pytest.param(
        "rbac.authorization.k8s.io",
        "ClusterRoleBinding",
        {
            "metadata": meta("admin", namespace=None),
            "roleRef": {"kind": "ClusterRole", "name": "cluster-admin"},
        },
        ["Name", "Role", "Age"],
        ["Users", "Groups", "ServiceAccounts"],
        {"Role": "ClusterRole/cluster-admin", "Users": ""},
        id="clusterrolebinding",
    ),
    pytest.param(
        "rbac.authorization.k8s.io",
        "Role",
        {"metadata": meta("reader")},
        ["Name", "Created At"],
        [],
        {"Created At": "2026-12-02T11:00:00Z"},
        id="role-created-at",
    ),
    pytest.param(
        "rbac.authorization.k8s.io",
        "ClusterRole",
        {"metadata": meta("view", namespace=None)},
        ["Name", "Created At"],
        [],
        {"Name": "view"},
        id="clusterrole-created-at",
    ),
    pytest.param(
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        {"metadata": meta("widgets.example.com", namespace=None)},
        ["Name", "Created At"],
        [],
        {"Created At": "2026-12-02T11:00:00Z"},
        id="crd-created-at",
    ),
    pytest.param(
        "",
        "LimitRange",
        {"metadata": meta("limits")},
        ["Name", "Created At"],
        [],
        {"Name": "limits"},
        id="limitrange-created-at",
    ),
    pytest.param(
        "metrics.k8s.io",
        "PodMetrics",
        {"metadata": meta("web-1", age=30)},
        ["Name", "Age"],
        [],
        {"Age": "30s"},
        id="other-kind-name-age",
    ),
]


@pytest.mark.parametrize(("group", "kind", "obj", "normal", "wide", "sample"), KIND_CASES)
def test_builtin_kind_columns_and_cells(
    group: str, kind: str, obj: Json, normal: list[str], wide: list[str], sample: dict[str, Any]
) -> None:
    check_columns_and_cells(group, kind, obj, normal, wide, sample)
