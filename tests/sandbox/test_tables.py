"""Server-side Tables: the columns and cells `kubectl get` prints, as Kubernetes 1.37 does."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from sandbox.errors import BadRequest
from sandbox.registry import BUILTINS, ResourceType
from sandbox.tables import human_duration, render_table
from sandbox.tables.jsonpath import compile_path

NOW = datetime(2026, 12, 2, 12, 0, 0, tzinfo=UTC)
TYPES = {(rt.group, rt.kind): rt for rt in BUILTINS}
Json = dict[str, Any]


def ago(seconds: float) -> str:
    return (NOW - timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def meta(name: str, *, age: float = 3600, namespace: str | None = "default", **extra: Any) -> Json:
    found: dict[str, Any] = {"name": name, "creationTimestamp": ago(age), "uid": f"uid-{name}"}
    if namespace:
        found["namespace"] = namespace
    return found | extra


def render(group: str, kind: str, *objects: dict[str, Any], **options: Any) -> dict[str, Any]:
    return render_table(TYPES[(group, kind)], list(objects), now=NOW, **options)


def row_by_name(table: dict[str, Any]) -> dict[str, Any]:
    """The first row as {column name: cell}."""
    names = [c["name"] for c in table["columnDefinitions"]]
    cells = table["rows"][0]["cells"]
    assert len(cells) == len(names)
    return dict(zip(names, cells, strict=True))


def column_names(table: dict[str, Any], *, priority: int) -> list[str]:
    return [c["name"] for c in table["columnDefinitions"] if c["priority"] == priority]


# --- human_duration ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        pytest.param(-5, "<invalid>", id="future-beyond-skew"),
        pytest.param(-1.5, "0s", id="one-second-skew"),
        pytest.param(0, "0s", id="zero"),
        pytest.param(5.9, "5s", id="truncates-fraction"),
        pytest.param(119, "119s", id="seconds-below-2m"),
        pytest.param(120, "2m", id="two-minutes"),
        pytest.param(200, "3m20s", id="minutes-and-seconds"),
        pytest.param(599, "9m59s", id="just-below-10m"),
        pytest.param(630, "10m", id="ten-minutes-drops-seconds"),
        pytest.param(3 * 3600 - 1, "179m", id="just-below-3h"),
        pytest.param(3 * 3600, "3h", id="three-hours"),
        pytest.param(3 * 3600 + 300, "3h5m", id="hours-and-minutes"),
        pytest.param(8 * 3600 + 300, "8h", id="eight-hours-drops-minutes"),
        pytest.param(48 * 3600 - 1, "47h", id="just-below-2d"),
        pytest.param(51 * 3600, "2d3h", id="days-and-hours"),
        pytest.param(8 * 86400 + 3 * 3600, "8d", id="eight-days-drops-hours"),
        pytest.param(45 * 86400, "45d", id="forty-five-days"),
        pytest.param(730 * 86400 - 1, "729d", id="just-below-2y"),
        pytest.param(730 * 86400, "2y", id="two-years"),
        pytest.param(740 * 86400, "2y10d", id="years-and-days"),
        pytest.param((8 * 365 + 10) * 86400, "8y", id="eight-years-drops-days"),
    ],
)
def test_human_duration_matches_kubernetes_breakpoints(seconds: float, expected: str) -> None:
    assert human_duration(seconds) == expected


# --- built-in kinds: columns and a sample of cells -----------------------------------------

TEMPLATE = {
    "metadata": {"labels": {"app": "web"}},
    "spec": {
        "containers": [
            {"name": "app", "image": "nginx:1.27"},
            {"name": "log", "image": "fluentbit"},
        ]
    },
}
SELECTOR = {
    "matchLabels": {"app": "web"},
    "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}],
}

KIND_CASES = [
    pytest.param(
        "apps",
        "Deployment",
        {
            "metadata": meta("web"),
            "spec": {"replicas": 3, "selector": SELECTOR, "template": TEMPLATE},
            "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2},
        },
        ["Name", "Ready", "Up-to-date", "Available", "Age"],
        ["Containers", "Images", "Selector"],
        {
            "Ready": "2/3",
            "Up-to-date": 3,
            "Available": 2,
            "Age": "60m",
            "Containers": "app,log",
            "Images": "nginx:1.27,fluentbit",
            "Selector": "app=web,tier in (a,b)",
        },
        id="deployment",
    ),
    pytest.param(
        "apps",
        "ReplicaSet",
        {
            "metadata": meta("web-7d4b9"),
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE},
            "status": {"replicas": 1, "readyReplicas": 1},
        },
        ["Name", "Desired", "Current", "Ready", "Age"],
        ["Containers", "Images", "Selector"],
        {"Desired": 1, "Current": 1, "Ready": 1, "Selector": "app=web"},
        id="replicaset-defaults-replicas-to-1",
    ),
    pytest.param(
        "apps",
        "StatefulSet",
        {
            "metadata": meta("db", age=45 * 86400),
            "spec": {"replicas": 3, "template": TEMPLATE},
            "status": {"readyReplicas": 3},
        },
        ["Name", "Ready", "Age"],
        ["Containers", "Images"],
        {"Ready": "3/3", "Age": "45d"},
        id="statefulset",
    ),
    pytest.param(
        "apps",
        "DaemonSet",
        {
            "metadata": meta("agent"),
            "spec": {
                "selector": {"matchLabels": {"app": "agent"}},
                "template": {
                    "spec": {
                        "nodeSelector": {"kubernetes.io/os": "linux"},
                        "containers": [{"name": "a", "image": "agent:1"}],
                    }
                },
            },
            "status": {
                "desiredNumberScheduled": 3,
                "currentNumberScheduled": 3,
                "numberReady": 2,
                "updatedNumberScheduled": 3,
                "numberAvailable": 2,
            },
        },
        ["Name", "Desired", "Current", "Ready", "Up-to-date", "Available", "Node Selector", "Age"],
        ["Containers", "Images", "Selector"],
        {
            "Desired": 3,
            "Ready": 2,
            "Node Selector": "kubernetes.io/os=linux",
            "Selector": "app=agent",
        },
        id="daemonset",
    ),
    pytest.param(
        "batch",
        "Job",
        {
            "metadata": meta("migrate"),
            "spec": {"completions": 1, "template": TEMPLATE},
            "status": {
                "succeeded": 1,
                "startTime": ago(600),
                "completionTime": ago(555),
                "conditions": [{"type": "Complete", "status": "True"}],
            },
        },
        ["Name", "Status", "Completions", "Duration", "Age"],
        ["Containers", "Images", "Selector"],
        {"Status": "Complete", "Completions": "1/1", "Duration": "45s", "Selector": "<none>"},
        id="job-complete",
    ),
    pytest.param(
        "batch",
        "CronJob",
        {
            "metadata": meta("backup"),
            "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": TEMPLATE}}},
            "status": {"lastScheduleTime": ago(200), "active": [{"name": "backup-1"}]},
        },
        ["Name", "Schedule", "Timezone", "Suspend", "Active", "Last Schedule", "Age"],
        ["Containers", "Images", "Selector"],
        {
            "Schedule": "*/5 * * * *",
            "Timezone": "<none>",
            "Suspend": "False",
            "Active": 1,
            "Last Schedule": "3m20s",
        },
        id="cronjob",
    ),
    pytest.param(
        "autoscaling",
        "HorizontalPodAutoscaler",
        {
            "metadata": meta("web"),
            "spec": {
                "scaleTargetRef": {"kind": "Deployment", "name": "web"},
                "maxReplicas": 10,
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "target": {"type": "Utilization", "averageUtilization": 80},
                        },
                    }
                ],
            },
            "status": {
                "currentReplicas": 3,
                "currentMetrics": [
                    {
                        "type": "Resource",
                        "resource": {"name": "cpu", "current": {"averageUtilization": 42}},
                    }
                ],
            },
        },
        ["Name", "Reference", "Targets", "MinPods", "MaxPods", "Replicas", "Age"],
        [],
        {
            "Reference": "Deployment/web",
            "Targets": "cpu: 42%/80%",
            "MinPods": "1",
            "MaxPods": 10,
            "Replicas": 3,
        },
        id="hpa",
    ),
    pytest.param(
        "policy",
        "PodDisruptionBudget",
        {
            "metadata": meta("web"),
            "spec": {"minAvailable": "50%"},
            "status": {"disruptionsAllowed": 1},
        },
        ["Name", "Min Available", "Max Unavailable", "Allowed Disruptions", "Age"],
        [],
        {"Min Available": "50%", "Max Unavailable": "N/A", "Allowed Disruptions": 1},
        id="pdb",
    ),
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
        "",
        "Namespace",
        {"metadata": meta("team-a", namespace=None), "status": {"phase": "Terminating"}},
        ["Name", "Status", "Age"],
        [],
        {"Status": "Terminating"},
        id="namespace",
    ),
    pytest.param(
        "",
        "Node",
        {
            "metadata": meta(
                "cp-1",
                namespace=None,
                labels={"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "etcd"},
            ),
            "spec": {"unschedulable": True},
            "status": {
                "conditions": [
                    {"type": "MemoryPressure", "status": "False"},
                    {"type": "Ready", "status": "True"},
                ],
                "addresses": [
                    {"type": "InternalIP", "address": "192.168.1.10"},
                    {"type": "Hostname", "address": "cp-1"},
                ],
                "nodeInfo": {
                    "kubeletVersion": "v1.37.0",
                    "osImage": "Debian GNU/Linux 12",
                    "kernelVersion": "6.1.0",
                    "containerRuntimeVersion": "containerd://2.1.0",
                },
            },
        },
        ["Name", "Status", "Roles", "Age", "Version"],
        ["Internal-IP", "External-IP", "OS-Image", "Kernel-Version", "Container-Runtime"],
        {
            "Status": "Ready,SchedulingDisabled",
            "Roles": "control-plane,etcd",
            "Version": "v1.37.0",
            "Internal-IP": "192.168.1.10",
            "External-IP": "<none>",
            "Container-Runtime": "containerd://2.1.0",
        },
        id="node",
    ),
    pytest.param(
        "",
        "Service",
        {
            "metadata": meta("web"),
            "spec": {
                "type": "LoadBalancer",
                "clusterIPs": ["10.96.0.12"],
                "selector": {"app": "web", "tier": "fe"},
                "ports": [
                    {"port": 80, "nodePort": 31000, "protocol": "TCP"},
                    {"port": 53, "protocol": "UDP"},
                ],
            },
            "status": {
                "loadBalancer": {"ingress": [{"ip": "203.0.113.9"}, {"hostname": "lb.example.com"}]}
            },
        },
        ["Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age"],
        ["Selector"],
        {
            "Type": "LoadBalancer",
            "Cluster-IP": "10.96.0.12",
            "External-IP": "203.0.113.9,lb.example.com",
            "Port(s)": "80:31000/TCP,53/UDP",
            "Selector": "app=web,tier=fe",
        },
        id="service",
    ),
    pytest.param(
        "",
        "Endpoints",
        {
            "metadata": meta("web"),
            "subsets": [
                {
                    "addresses": [{"ip": f"10.1.0.{i}"} for i in range(1, 5)],
                    "ports": [{"port": 8080}],
                }
            ],
        },
        ["Name", "Endpoints", "Age"],
        [],
        {"Endpoints": "10.1.0.1:8080,10.1.0.2:8080,10.1.0.3:8080 + 1 more..."},
        id="endpoints",
    ),
    pytest.param(
        "discovery.k8s.io",
        "EndpointSlice",
        {
            "metadata": meta("web-abc"),
            "addressType": "IPv4",
            "ports": [{"name": "http", "port": 8080}],
            "endpoints": [{"addresses": ["10.1.0.1"]}, {"addresses": ["10.1.0.2"]}],
        },
        ["Name", "AddressType", "Ports", "Endpoints", "Age"],
        [],
        {"AddressType": "IPv4", "Ports": "8080", "Endpoints": "10.1.0.1,10.1.0.2"},
        id="endpointslice",
    ),
    pytest.param(
        "networking.k8s.io",
        "Ingress",
        {
            "metadata": meta("web"),
            "spec": {
                "ingressClassName": "nginx",
                "rules": [{"host": "a.example.com"}, {"host": "b.example.com"}],
                "tls": [{"hosts": ["a.example.com"]}],
            },
            "status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.7"}]}},
        },
        ["Name", "Class", "Hosts", "Address", "Ports", "Age"],
        [],
        {
            "Class": "nginx",
            "Hosts": "a.example.com,b.example.com",
            "Address": "203.0.113.7",
            "Ports": "80, 443",
        },
        id="ingress",
    ),
    pytest.param(
        "networking.k8s.io",
        "IngressClass",
        {
            "metadata": meta("nginx", namespace=None),
            "spec": {
                "controller": "k8s.io/ingress-nginx",
                "parameters": {"apiGroup": "k8s.example.com", "kind": "Params", "name": "p"},
            },
        },
        ["Name", "Controller", "Parameters", "Age"],
        [],
        {"Controller": "k8s.io/ingress-nginx", "Parameters": "Params.k8s.example.com/p"},
        id="ingressclass",
    ),
    pytest.param(
        "networking.k8s.io",
        "NetworkPolicy",
        {"metadata": meta("deny-all"), "spec": {"podSelector": {}}},
        ["Name", "Pod-Selector", "Age"],
        [],
        {"Pod-Selector": "<none>"},
        id="networkpolicy",
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
        "apps",
        "ControllerRevision",
        {
            "metadata": meta(
                "db-5f7",
                ownerReferences=[
                    {
                        "apiVersion": "apps/v1",
                        "kind": "StatefulSet",
                        "name": "db",
                        "controller": True,
                    }
                ],
            ),
            "revision": 2,
        },
        ["Name", "Controller", "Revision", "Age"],
        [],
        {"Controller": "statefulset.apps/db", "Revision": 2},
        id="controllerrevision",
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
    table = render(group, kind, obj)
    assert column_names(table, priority=0) == normal
    assert column_names(table, priority=1) == wide
    row = row_by_name(table)
    assert row["Name"] == sample.get("Name", obj["metadata"]["name"])
    assert {key: row[key] for key in sample} == sample


EVENT_CORE = {
    "metadata": meta("web-1.17f"),
    "involvedObject": {"kind": "Pod", "name": "web-1", "fieldPath": "spec.containers{app}"},
    "reason": "BackOff",
    "type": "Warning",
    "message": "Back-off restarting failed container\n",
    "source": {"component": "kubelet", "host": "node-1"},
    "firstTimestamp": ago(600),
    "lastTimestamp": ago(30),
    "count": 12,
}
EVENT_V1 = {
    "metadata": meta("web-1.18a"),
    "regarding": {"kind": "Deployment", "name": "web"},
    "reason": "ScalingReplicaSet",
    "type": "Normal",
    "note": "Scaled up replica set web-7d4b9 to 3",
    "reportingController": "deployment-controller",
    "eventTime": ago(90),
}


@pytest.mark.parametrize(
    ("group", "event", "expected"),
    [
        pytest.param(
            "",
            EVENT_CORE,
            {
                "Last Seen": "30s",
                "Type": "Warning",
                "Reason": "BackOff",
                "Object": "pod/web-1",
                "Subobject": "spec.containers{app}",
                "Source": "kubelet, node-1",
                "Message": "Back-off restarting failed container",
                "First Seen": "10m",
                "Count": 12,
                "Name": "web-1.17f",
            },
            id="core-v1",
        ),
        pytest.param(
            "events.k8s.io",
            EVENT_V1,
            {
                "Last Seen": "90s",
                "Object": "deployment/web",
                "Source": "deployment-controller",
                "Message": "Scaled up replica set web-7d4b9 to 3",
                "First Seen": "90s",
                "Count": 1,
            },
            id="events-k8s-io-singleton",
        ),
        pytest.param(
            "",
            EVENT_CORE | {"series": {"count": 40, "lastObservedTime": ago(5)}},
            {"Last Seen": "5s", "Count": 40},
            id="series-overrides-last-seen-and-count",
        ),
    ],
)
def test_events_print_last_seen_object_and_count(group: str, event: Json, expected: Json) -> None:
    table = render(group, "Event", event)
    assert column_names(table, priority=0) == ["Last Seen", "Type", "Reason", "Object", "Message"]
    assert column_names(table, priority=1) == ["Subobject", "Source", "First Seen", "Count", "Name"]
    row = row_by_name(table)
    assert {key: row[key] for key in expected} == expected


# --- pods ----------------------------------------------------------------------------------


def pod(
    *,
    phase: str = "Running",
    containers: list[dict[str, Any]] | None = None,
    init: list[dict[str, Any]] | None = None,
    init_specs: list[dict[str, Any]] | None = None,
    conditions: list[dict[str, Any]] | None = None,
    **status: Any,
) -> dict[str, Any]:
    statuses = containers if containers is not None else [running("app")]
    spec: dict[str, Any] = {"containers": [{"name": c["name"], "image": "app:1"} for c in statuses]}
    if init is not None or init_specs is not None:
        spec["initContainers"] = init_specs or [
            {"name": c["name"], "image": "init:1"} for c in init or []
        ]
    body: dict[str, Any] = {"phase": phase, "containerStatuses": statuses, **status}
    if init is not None:
        body["initContainerStatuses"] = init
    if conditions is not None:
        body["conditions"] = conditions
    return {"metadata": meta("web-1"), "spec": spec, "status": body}


def running(name: str, *, ready: bool = True, restarts: int = 0) -> dict[str, Any]:
    return {
        "name": name,
        "ready": ready,
        "started": True,
        "restartCount": restarts,
        "state": {"running": {"startedAt": ago(100)}},
    }


def waiting(name: str, reason: str, *, restarts: int = 0) -> dict[str, Any]:
    return {
        "name": name,
        "ready": False,
        "restartCount": restarts,
        "state": {"waiting": {"reason": reason}},
    }


def terminated(name: str, *, exit_code: int, reason: str = "", **extra: Any) -> dict[str, Any]:
    state = {"exitCode": exit_code, **({"reason": reason} if reason else {}), **extra}
    return {"name": name, "ready": False, "restartCount": 0, "state": {"terminated": state}}


READY = [{"type": "Initialized", "status": "True"}, {"type": "Ready", "status": "True"}]


@pytest.mark.parametrize(
    ("obj", "status", "ready"),
    [
        pytest.param(pod(conditions=READY), "Running", "1/1", id="running"),
        pytest.param(
            pod(phase="Pending", containers=[waiting("app", "ContainerCreating")]),
            "ContainerCreating",
            "0/1",
            id="pending-container-creating",
        ),
        pytest.param(
            pod(phase="Pending", containers=[]), "Pending", "0/0", id="pending-unscheduled"
        ),
        pytest.param(
            pod(containers=[waiting("app", "CrashLoopBackOff", restarts=4)]),
            "CrashLoopBackOff",
            "0/1",
            id="crashloop",
        ),
        pytest.param(
            pod(phase="Pending", containers=[waiting("app", "ImagePullBackOff")]),
            "ImagePullBackOff",
            "0/1",
            id="image-pull-backoff",
        ),
        pytest.param(
            pod(phase="Pending", containers=[waiting("app", "ErrImagePull")]),
            "ErrImagePull",
            "0/1",
            id="err-image-pull",
        ),
        pytest.param(
            pod(phase="Succeeded", containers=[terminated("app", exit_code=0, reason="Completed")]),
            "Completed",
            "0/1",
            id="completed",
        ),
        pytest.param(
            pod(phase="Failed", containers=[terminated("app", exit_code=1, reason="Error")]),
            "Error",
            "0/1",
            id="error",
        ),
        pytest.param(
            pod(containers=[terminated("app", exit_code=137, reason="OOMKilled")]),
            "OOMKilled",
            "0/1",
            id="oomkilled",
        ),
        pytest.param(
            pod(containers=[terminated("app", exit_code=2)]), "ExitCode:2", "0/1", id="exit-code"
        ),
        pytest.param(
            pod(containers=[terminated("app", exit_code=0, signal=9)]),
            "Signal:9",
            "0/1",
            id="signal",
        ),
        pytest.param(
            pod(containers=[running("app"), waiting("log", "CrashLoopBackOff")]),
            "CrashLoopBackOff",
            "1/2",
            id="second-container-crashing",
        ),
        pytest.param(
            pod(
                containers=[
                    waiting("app", "CreateContainerConfigError"),
                    waiting("log", "ErrImagePull"),
                ]
            ),
            "CreateContainerConfigError",
            "0/2",
            id="first-container-reason-wins",
        ),
        pytest.param(
            pod(
                phase="Pending",
                init=[waiting("migrate", "PodInitializing")],
                containers=[waiting("app", "PodInitializing")],
            ),
            "Init:0/1",
            "0/1",
            id="init-0-of-1",
        ),
        pytest.param(
            pod(
                phase="Pending",
                init=[terminated("a", exit_code=0), running("b", ready=False)],
                containers=[waiting("app", "PodInitializing")],
            ),
            "Init:1/2",
            "0/1",
            id="init-1-of-2",
        ),
        pytest.param(
            pod(
                phase="Pending",
                init=[waiting("migrate", "CrashLoopBackOff", restarts=2)],
                containers=[waiting("app", "PodInitializing")],
            ),
            "Init:CrashLoopBackOff",
            "0/1",
            id="init-crashloop",
        ),
        pytest.param(
            pod(phase="Pending", init=[terminated("migrate", exit_code=1, reason="Error")]),
            "Init:Error",
            "0/1",
            id="init-error",
        ),
        pytest.param(
            pod(phase="Pending", init=[terminated("migrate", exit_code=3)]),
            "Init:ExitCode:3",
            "0/1",
            id="init-exit-code",
        ),
        pytest.param(
            pod(
                init=[running("proxy")],
                init_specs=[{"name": "proxy", "restartPolicy": "Always"}],
                containers=[running("app")],
                conditions=READY,
            ),
            "Running",
            "2/2",
            id="sidecar-counts-as-container",
        ),
        pytest.param(
            pod(
                phase="Running",
                containers=[terminated("app", exit_code=0, reason="Completed"), running("log")],
                conditions=[{"type": "Ready", "status": "False"}],
            ),
            "NotReady",
            "1/2",
            id="completed-with-running-container-not-ready",
        ),
        pytest.param(
            pod(phase="Failed", reason="Evicted", containers=[]), "Evicted", "0/0", id="evicted"
        ),
        pytest.param(
            pod(
                phase="Pending",
                containers=[],
                conditions=[
                    {"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}
                ],
            ),
            "SchedulingGated",
            "0/0",
            id="scheduling-gated",
        ),
        pytest.param(pod(phase="Unknown", reason="NodeLost"), "NodeLost", "1/1", id="node-lost"),
    ],
)
def test_pod_status_follows_kubectl_rules(obj: Json, status: str, ready: str) -> None:
    row = row_by_name(render("", "Pod", obj))
    assert (row["Status"], row["Ready"]) == (status, ready)


@pytest.mark.parametrize(
    ("phase", "reason", "expected"),
    [
        pytest.param("Running", None, "Terminating", id="running-pod-deleted"),
        pytest.param("Succeeded", None, "Completed", id="finished-pod-keeps-its-status"),
        pytest.param("Running", "NodeLost", "Unknown", id="lost-with-its-node"),
    ],
)
def test_deleted_pods_show_terminating(phase: str, reason: str | None, expected: str) -> None:
    containers = (
        [terminated("app", exit_code=0, reason="Completed")] if phase == "Succeeded" else None
    )
    obj = pod(phase=phase, containers=containers)
    if reason:
        obj["status"]["reason"] = reason
    obj["metadata"]["deletionTimestamp"] = ago(5)
    assert row_by_name(render("", "Pod", obj))["Status"] == expected


def test_restarts_show_how_long_ago_the_last_restart_was() -> None:
    crashed = waiting("app", "CrashLoopBackOff", restarts=3)
    crashed["lastState"] = {"terminated": {"exitCode": 1, "finishedAt": ago(125)}}
    other = running("log", restarts=1)
    other["lastState"] = {"terminated": {"exitCode": 1, "finishedAt": ago(3000)}}
    never = waiting("app", "CrashLoopBackOff", restarts=2)
    cells = [
        row_by_name(render("", "Pod", pod(containers=c)))["Restarts"]
        for c in ([crashed, other], [never])
    ]
    assert cells == ["4 (2m5s ago)", "2"]


def test_pod_wide_cells_show_ip_node_and_readiness_gates() -> None:
    obj = pod(
        conditions=[*READY, {"type": "example.com/lb", "status": "True"}],
        podIPs=[{"ip": "10.1.2.3"}],
    )
    obj["spec"] |= {
        "nodeName": "node-2",
        "readinessGates": [
            {"conditionType": "example.com/lb"},
            {"conditionType": "example.com/dns"},
        ],
    }
    row = row_by_name(render("", "Pod", obj))
    assert [row["IP"], row["Node"], row["Nominated Node"], row["Readiness Gates"]] == [
        "10.1.2.3",
        "node-2",
        "<none>",
        "1/2",
    ]


@pytest.mark.parametrize(
    ("phase", "expected"),
    [
        pytest.param(
            "Succeeded",
            [
                {
                    "type": "Completed",
                    "status": "True",
                    "reason": "Succeeded",
                    "message": "The pod has completed successfully.",
                }
            ],
            id="succeeded",
        ),
        pytest.param(
            "Failed",
            [
                {
                    "type": "Completed",
                    "status": "True",
                    "reason": "Failed",
                    "message": "The pod failed.",
                }
            ],
            id="failed",
        ),
        pytest.param("Running", None, id="running-has-none"),
    ],
)
def test_finished_pods_carry_row_conditions(phase: str, expected: list[Any] | None) -> None:
    row = render("", "Pod", pod(phase=phase))["rows"][0]
    assert row.get("conditions") == expected


# --- other status rules --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "status", "extra_meta", "expected"),
    [
        pytest.param(
            {"parallelism": 3},
            {"succeeded": 1, "startTime": ago(130)},
            {},
            ("Running", "1/1 of 3", "2m10s"),
            id="running-parallel",
        ),
        pytest.param(
            {"completions": 5},
            {"conditions": [{"type": "Failed", "status": "True"}]},
            {},
            ("Failed", "0/5", ""),
            id="failed-never-started",
        ),
        pytest.param(
            {"completions": 1, "suspend": True},
            {"conditions": [{"type": "Suspended", "status": "True"}]},
            {},
            ("Suspended", "0/1", ""),
            id="suspended",
        ),
        pytest.param(
            {"completions": 1},
            {},
            {"deletionTimestamp": ago(1)},
            ("Terminating", "0/1", ""),
            id="terminating",
        ),
    ],
)
def test_job_status_completions_and_duration(
    spec: Json, status: Json, extra_meta: Json, expected: tuple[str, ...]
) -> None:
    obj = {
        "metadata": meta("job", **extra_meta),
        "spec": {**spec, "template": TEMPLATE},
        "status": status,
    }
    row = row_by_name(render("batch", "Job", obj))
    assert (row["Status"], row["Completions"], row["Duration"]) == expected


@pytest.mark.parametrize(
    ("spec", "status", "expected"),
    [
        pytest.param(
            {"type": "ClusterIP", "clusterIP": "None"},
            {},
            ("None", "<none>", "<none>"),
            id="headless",
        ),
        pytest.param(
            {"type": "LoadBalancer", "clusterIP": "10.96.1.1", "ports": [{"port": 443}]},
            {},
            ("10.96.1.1", "<pending>", "443/TCP"),
            id="lb-pending",
        ),
        pytest.param(
            {"type": "LoadBalancer", "clusterIP": "10.96.1.1", "externalIPs": ["198.51.100.1"]},
            {"loadBalancer": {"ingress": [{"ip": "203.0.113.2"}, {"ip": "203.0.113.1"}]}},
            ("10.96.1.1", "203.0.113.1,203.0.113.2,198.51.100.1", "<none>"),
            id="lb-plus-external-ips",
        ),
        pytest.param(
            {"type": "ExternalName", "externalName": "db.example.com"},
            {},
            ("<none>", "db.example.com", "<none>"),
            id="external-name",
        ),
    ],
)
def test_service_cluster_and_external_ips(
    spec: Json, status: Json, expected: tuple[str, ...]
) -> None:
    row = row_by_name(
        render("", "Service", {"metadata": meta("svc"), "spec": spec, "status": status})
    )
    assert (row["Cluster-IP"], row["External-IP"], row["Port(s)"]) == expected


@pytest.mark.parametrize(
    ("metrics", "current", "expected"),
    [
        pytest.param([], [], "cpu: <unknown>/80%", id="defaulted-cpu-target"),
        pytest.param(
            [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "memory",
                        "target": {"type": "AverageValue", "averageValue": "200Mi"},
                    },
                },
                {
                    "type": "Pods",
                    "pods": {
                        "metric": {"name": "qps"},
                        "target": {"type": "AverageValue", "averageValue": "10"},
                    },
                },
                {
                    "type": "External",
                    "external": {
                        "metric": {"name": "queue"},
                        "target": {"type": "Value", "value": "30"},
                    },
                },
            ],
            [
                {
                    "type": "Resource",
                    "resource": {"name": "memory", "current": {"averageValue": "120Mi"}},
                }
            ],
            "memory: 120Mi/200Mi, <unknown>/10 + 1 more...",
            id="mixed-metrics-capped-at-two",
        ),
        pytest.param(
            [
                {
                    "type": "Object",
                    "object": {"target": {"type": "AverageValue", "averageValue": "5"}},
                }
            ],
            [{"type": "Object", "object": {"current": {"averageValue": "7"}}}],
            "7/5 (avg)",
            id="object-average",
        ),
    ],
)
def test_hpa_targets(metrics: list[Any], current: list[Any], expected: str) -> None:
    obj = {
        "metadata": meta("hpa"),
        "spec": {
            "scaleTargetRef": {"kind": "Deployment", "name": "w"},
            "maxReplicas": 5,
            "minReplicas": 2,
            "metrics": metrics,
        },
        "status": {"currentMetrics": current},
    }
    row = row_by_name(render("autoscaling", "HorizontalPodAutoscaler", obj))
    assert (row["Targets"], row["MinPods"]) == (expected, "2")


@pytest.mark.parametrize(
    ("conditions", "expected"),
    [
        pytest.param([{"type": "Ready", "status": "False"}], "NotReady", id="not-ready"),
        pytest.param(
            [{"type": "Ready", "status": "Unknown"}], "NotReady", id="unknown-reads-not-ready"
        ),
        pytest.param([], "Unknown", id="no-ready-condition"),
    ],
)
def test_node_status(conditions: list[Any], expected: str) -> None:
    node = {"metadata": meta("n", namespace=None), "status": {"conditions": conditions}}
    row = row_by_name(render("", "Node", node))
    assert (row["Status"], row["Roles"], row["OS-Image"]) == (expected, "<none>", "<unknown>")


# --- the Table envelope --------------------------------------------------------------------


def test_table_envelope_carries_list_metadata_and_full_column_definitions() -> None:
    table = render(
        "",
        "ConfigMap",
        {"metadata": meta("a")},
        list_meta={"resourceVersion": "42", "continue": "x"},
    )
    assert (table["kind"], table["apiVersion"], table["metadata"]) == (
        "Table",
        "meta.k8s.io/v1",
        {"resourceVersion": "42", "continue": "x"},
    )
    assert table["columnDefinitions"][0] == {
        "name": "Name",
        "type": "string",
        "format": "name",
        "description": table["columnDefinitions"][0]["description"],
        "priority": 0,
    }
    assert all(
        set(c) == {"name", "type", "format", "description", "priority"} and c["description"]
        for c in table["columnDefinitions"]
    )


def test_empty_list_renders_columns_and_no_rows() -> None:
    table = render_table(TYPES[("apps", "Deployment")], [], now=NOW)
    assert (table["rows"], table["metadata"], len(table["columnDefinitions"])) == ([], {}, 8)


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        pytest.param(
            "Metadata",
            {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": meta("cfg"),
            },
            id="metadata",
        ),
        pytest.param(
            "Object",
            {"kind": "ConfigMap", "apiVersion": "v1", "metadata": meta("cfg"), "data": {"k": "v"}},
            id="object",
        ),
        pytest.param("None", None, id="none"),
    ],
)
def test_include_object_modes(mode: str, expected: Json | None) -> None:
    obj = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": meta("cfg"), "data": {"k": "v"}}
    assert render("", "ConfigMap", obj, include_object=mode)["rows"][0]["object"] == expected


def test_unknown_include_object_is_a_bad_request() -> None:
    with pytest.raises(BadRequest, match='unrecognized includeObject value: "Everything"'):
        render("", "ConfigMap", {"metadata": meta("cfg")}, include_object="Everything")


def test_naive_now_is_taken_as_utc() -> None:
    table = render_table(
        TYPES[("", "ConfigMap")], [{"metadata": meta("a", age=200)}], now=NOW.replace(tzinfo=None)
    )
    assert row_by_name(table)["Age"] == "3m20s"


@pytest.mark.parametrize(
    ("created", "expected"),
    [
        pytest.param(None, "<unknown>", id="missing"),
        pytest.param("not-a-time", "<unknown>", id="unreadable"),
        pytest.param("2026-12-02T11:59:59.123456Z", "0s", id="fractional-seconds"),
    ],
)
def test_age_of_missing_or_odd_timestamps(created: str | None, expected: str) -> None:
    obj = {"metadata": {"name": "a", **({"creationTimestamp": created} if created else {})}}
    assert row_by_name(render("", "ConfigMap", obj))["Age"] == expected


def test_rendering_never_modifies_the_objects() -> None:
    objects = [pod(conditions=READY), pod(phase="Pending", init=[waiting("m", "PodInitializing")])]
    objects[1]["metadata"]["deletionTimestamp"] = ago(3)
    before = copy.deepcopy(objects)
    for mode in ("Metadata", "Object", "None"):
        render_table(TYPES[("", "Pod")], objects, include_object=mode, now=NOW)
    assert objects == before


# --- custom resources ----------------------------------------------------------------------

WIDGET_COLUMNS = (
    {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
    {
        "name": "Ready",
        "type": "string",
        "jsonPath": '.status.conditions[?(@.type=="Ready")].status',
        "description": "Whether the widget is ready.",
    },
    {"name": "Hosts", "type": "string", "jsonPath": ".spec.hosts", "priority": 1},
    {"name": "Paused", "type": "boolean", "jsonPath": ".spec.paused"},
    {"name": "Ratio", "type": "number", "jsonPath": ".status.ratio"},
    {"name": "Missing", "type": "string", "jsonPath": ".status.nothing"},
    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
)
WIDGET = {
    "apiVersion": "example.com/v1",
    "kind": "Widget",
    "metadata": meta("w1", age=51 * 3600),
    "spec": {"size": 3, "hosts": ["a.example", "b<c>"], "paused": False},
    "status": {
        "ratio": 2,
        "conditions": [{"type": "Synced", "status": "False"}, {"type": "Ready", "status": "True"}],
    },
}


def widget_type(columns: tuple[dict[str, Any], ...]) -> ResourceType:
    return ResourceType(
        group="example.com",
        version="v1",
        plural="widgets",
        kind="Widget",
        namespaced=True,
        printer_columns=columns,
        custom=True,
    )


def test_crd_printer_columns_fill_cells_from_jsonpath() -> None:
    table = render_table(widget_type(WIDGET_COLUMNS), [WIDGET], now=NOW)
    definitions = {c["name"]: c for c in table["columnDefinitions"]}
    assert list(definitions) == [
        "Name",
        "Size",
        "Ready",
        "Hosts",
        "Paused",
        "Ratio",
        "Missing",
        "Age",
    ]
    assert (
        definitions["Hosts"]["priority"],
        definitions["Ready"]["description"],
        definitions["Size"]["description"],
    ) == (
        1,
        "Whether the widget is ready.",
        "Custom resource definition column (in JSONPath format): .spec.size",
    )
    assert table["rows"][0]["cells"] == [
        "w1",
        3,
        "True",
        '["a.example","b\\u003cc\\u003e"]',
        False,
        2.0,
        None,
        "2d3h",
    ]


def test_crd_without_printer_columns_shows_name_and_age() -> None:
    table = render_table(widget_type(()), [WIDGET], now=NOW)
    assert [(c["name"], c["type"]) for c in table["columnDefinitions"]] == [
        ("Name", "string"),
        ("Age", "date"),
    ]
    assert table["rows"][0]["cells"] == ["w1", "2d3h"]


def test_crd_columns_stop_at_an_unparsable_jsonpath() -> None:
    columns = (
        {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
        {"name": "Bad", "type": "string", "jsonPath": ".spec[?(@.x =~ /y/)]"},
        {"name": "Paused", "type": "boolean", "jsonPath": ".spec.paused"},
    )
    table = render_table(widget_type(columns), [WIDGET], now=NOW)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Size"]
    assert table["rows"][0]["cells"] == ["w1", 3]


@pytest.mark.parametrize(
    ("column_type", "value", "expected"),
    [
        pytest.param("integer", 2.9, 2, id="integer-truncates-float"),
        pytest.param("integer", "3", None, id="integer-rejects-string"),
        pytest.param("integer", True, None, id="integer-rejects-bool"),
        pytest.param("string", 1.5, "1.5", id="string-of-float"),
        pytest.param("string", 3.0, "3", id="string-of-whole-float"),
        pytest.param("string", True, "true", id="string-of-bool"),
        pytest.param("string", {"b": 1, "a": [1]}, '{"a":[1],"b":1}', id="string-of-object"),
        pytest.param("date", "", "<unknown>", id="date-empty"),
        pytest.param("date", "yesterday", "<invalid>", id="date-invalid"),
        pytest.param("date", ago(45 * 86400), "45d", id="date-age"),
        pytest.param("boolean", "true", None, id="boolean-rejects-string"),
    ],
)
def test_crd_cells_follow_the_column_type(column_type: str, value: Any, expected: Any) -> None:
    columns = ({"name": "V", "type": column_type, "jsonPath": ".spec.value"},)
    obj = {"metadata": meta("w"), "spec": {"value": value}}
    assert render_table(widget_type(columns), [obj], now=NOW)["rows"][0]["cells"][1] == expected


DOC: Json = {
    "metadata": {"name": "x", "labels": {"app.kubernetes.io/name": "web"}},
    "spec": {"items": [{"n": 1, "tag": "a"}, {"n": 2, "tag": "b"}, {"n": 3}], "empty": None},
    "status": {
        "conditions": [{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "False"}]
    },
}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        pytest.param(".metadata.name", ["x"], id="field"),
        pytest.param("{.metadata.name}", ["x"], id="braces"),
        pytest.param("$.metadata.name", ["x"], id="dollar"),
        pytest.param(".metadata.labels.app\\.kubernetes\\.io/name", ["web"], id="escaped-dots"),
        pytest.param(".metadata.labels['app.kubernetes.io/name']", ["web"], id="quoted-key"),
        pytest.param(".spec.items[1].n", [2], id="index"),
        pytest.param(".spec.items[-1].n", [3], id="negative-index"),
        pytest.param(".spec.items[5].n", [], id="index-out-of-range"),
        pytest.param(".spec.items[0:2].n", [1, 2], id="slice"),
        pytest.param(".spec.items[*].tag", ["a", "b"], id="wildcard-skips-missing"),
        pytest.param(".spec.items[?(@.n > 1)].n", [2, 3], id="filter-greater"),
        pytest.param(".spec.items[?(@.tag != 'a')].n", [2], id="filter-not-equal-skips-missing"),
        pytest.param(".spec.items[?(@.tag)].n", [1, 2], id="filter-exists"),
        pytest.param(
            '.status.conditions[?(@.type=="Synced")].status', ["False"], id="filter-condition"
        ),
        pytest.param('.status.conditions[?(@.type=="Gone")].status', [], id="filter-no-match"),
        pytest.param(
            "..status",
            [{"conditions": DOC["status"]["conditions"]}, "True", "False"],
            id="recursive",
        ),
        pytest.param(".spec.empty", [None], id="null-value"),
        pytest.param(".nothing.here", [], id="missing"),
    ],
)
def test_jsonpath_subset(path: str, expected: list[Any]) -> None:
    assert compile_path(path).find(DOC) == expected


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(".spec[", id="unclosed-bracket"),
        pytest.param(".spec['a", id="unterminated-string"),
        pytest.param(".spec[a]", id="bad-index"),
        pytest.param(".spec[?(@.a == b)]", id="bare-word-operand"),
        pytest.param(".spec..", id="empty-name"),
    ],
)
def test_jsonpath_rejects_what_it_cannot_parse(path: str) -> None:
    with pytest.raises(ValueError, match="JSONPath"):
        compile_path(path)


# --- scale ---------------------------------------------------------------------------------


def test_rendering_5000_pods_keeps_every_row() -> None:
    """Speed is measured by `make bench` (list of 5,000 pods as a Table), not asserted here."""
    pods = []
    for i in range(5000):
        obj = pod(
            containers=[running("app", restarts=1), running("log")],
            conditions=READY,
            podIP=f"10.0.{i // 250}.{i % 250}",
        )
        obj["status"]["containerStatuses"][0]["lastState"] = {
            "terminated": {"exitCode": 1, "finishedAt": ago(300)}
        }
        obj["metadata"]["name"] = f"web-{i}"
        pods.append(obj)
    table = render_table(TYPES[("", "Pod")], pods, now=NOW)
    assert len(table["rows"]) == 5000
    assert table["rows"][-1]["cells"][:4] == ["web-4999", "2/2", "Running", "1 (5m ago)"]
