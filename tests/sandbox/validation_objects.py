"""Shared builders for the object validation tests (tests/sandbox/test_validation_*.py).

What may live here: `GOOD`, one valid object per built-in kind that every case starts from; `edit`,
which copies such an object with dotted field paths set (None deletes); readers of what
`sandbox.validation.problems` reports; the Kubernetes reason names and the long stock messages
several case tables quote; and small valid fragments (a container, an ExternalName service) that
cases extend. Case tables and tests belong in the test modules.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from sandbox.registry import BUILTINS
from sandbox.validation import problems

Obj = dict[str, Any]

TYPES = {rt.kind: rt for rt in BUILTINS if rt.group not in ("events.k8s.io", "metrics.k8s.io")}


def edit(base: Obj, changes: dict[str, Any]) -> Obj:
    """A deep copy of `base` with each dotted path set to its value (None deletes it)."""
    out = copy.deepcopy(base)
    for dotted, value in changes.items():
        *parents, last = dotted.split(".")
        node = out
        for step in parents:
            node = node.setdefault(step, {})
        if value is None:
            node.pop(last, None)
        else:
            node[last] = copy.deepcopy(value)
    return out


def _template(labels: dict[str, str], restart: str = "Always") -> Obj:
    return {
        "metadata": {"labels": labels},
        "spec": {
            "restartPolicy": restart,
            "containers": [{"name": "app", "image": "nginx:1.27"}],
        },
    }


_WEB = {"app": "web"}
SELECTOR = {"matchLabels": _WEB}
CRD_SCHEMA = {"openAPIV3Schema": {"type": "object"}}

GOOD: dict[str, Obj] = {
    "Pod": {
        "metadata": {"name": "web", "namespace": "default", "labels": _WEB},
        "spec": {
            "restartPolicy": "Always",
            "volumes": [{"name": "data", "emptyDir": {}}],
            "initContainers": [{"name": "init", "image": "busybox"}],
            "containers": [
                {
                    "name": "app",
                    "image": "nginx:1.27",
                    "imagePullPolicy": "IfNotPresent",
                    "ports": [{"name": "http", "containerPort": 80, "protocol": "TCP"}],
                    "env": [{"name": "MODE", "value": "prod"}],
                    "resources": {
                        "requests": {"cpu": "100m", "memory": "64Mi"},
                        "limits": {"cpu": 1, "memory": "128Mi"},
                    },
                    "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                }
            ],
            "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
        },
    },
    "Deployment": {
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 3,
            "selector": SELECTOR,
            "template": _template(_WEB),
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0},
            },
            "progressDeadlineSeconds": 600,
            "revisionHistoryLimit": 10,
        },
    },
    "ReplicaSet": {
        "metadata": {"name": "web-1", "namespace": "default"},
        "spec": {"replicas": 1, "selector": SELECTOR, "template": _template(_WEB)},
    },
    "StatefulSet": {
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {
            "replicas": 1,
            "serviceName": "db",
            "selector": SELECTOR,
            "template": _template(_WEB),
            "podManagementPolicy": "OrderedReady",
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
        },
    },
    "DaemonSet": {
        "metadata": {"name": "agent", "namespace": "kube-system"},
        "spec": {
            "selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]},
            "template": _template(_WEB),
            "updateStrategy": {"type": "OnDelete"},
        },
    },
    "Job": {
        "metadata": {"name": "migrate", "namespace": "default"},
        "spec": {"completions": 1, "parallelism": 1, "template": _template({}, "Never")},
    },
    "CronJob": {
        "metadata": {"name": "nightly", "namespace": "default"},
        "spec": {
            "schedule": "*/5 1-3 * JAN-MAR mon,fri",
            "concurrencyPolicy": "Forbid",
            "jobTemplate": {"spec": {"template": _template({}, "OnFailure")}},
        },
    },
    "Service": {
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "type": "NodePort",
            "selector": _WEB,
            "clusterIP": "10.96.0.10",
            "clusterIPs": ["10.96.0.10"],
            "ports": [
                {"name": "http", "port": 80, "targetPort": "http", "nodePort": 30080},
                {"name": "metrics", "port": 9090, "targetPort": 9090, "protocol": "TCP"},
            ],
        },
    },
    "ConfigMap": {
        "metadata": {"name": "settings", "namespace": "default"},
        "data": {"app.properties": "a=b", "LOG_LEVEL": "debug"},
        "binaryData": {"blob": "AAE="},
    },
    "Secret": {
        "metadata": {"name": "tls", "namespace": "default"},
        "type": "kubernetes.io/tls",
        "data": {"tls.crt": "Y2VydA==", "tls.key": "a2V5\n"},
    },
    "PodDisruptionBudget": {
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"minAvailable": "50%", "selector": SELECTOR},
    },
    "HorizontalPodAutoscaler": {
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 2,
            "maxReplicas": 5,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu"}}],
        },
    },
    "Role": {
        "metadata": {"name": "reader", "namespace": "default"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}],
    },
    "ClusterRole": {
        "metadata": {"name": "system:health"},
        "rules": [{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}],
    },
    "RoleBinding": {
        "metadata": {"name": "read-pods", "namespace": "default"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
        "subjects": [
            {"kind": "ServiceAccount", "name": "default"},
            {"kind": "User", "name": "jane", "apiGroup": "rbac.authorization.k8s.io"},
        ],
    },
    "ClusterRoleBinding": {
        "metadata": {"name": "health"},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "system:health",
        },
        "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": "default"}],
    },
    "Namespace": {"metadata": {"name": "shop"}},
    "Node": {
        "metadata": {"name": "node1.example.com", "labels": {"kubernetes.io/hostname": "node1"}},
        "spec": {
            "podCIDR": "10.244.1.0/24",
            "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}],
        },
    },
    "PersistentVolumeClaim": {
        "metadata": {"name": "data", "namespace": "default"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    },
    "Lease": {
        "metadata": {"name": "node1", "namespace": "kube-node-lease"},
        "spec": {"holderIdentity": "node1", "leaseDurationSeconds": 40, "leaseTransitions": 0},
    },
    "CustomResourceDefinition": {
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [
                {"name": "v1", "served": True, "storage": True, "schema": CRD_SCHEMA},
                {"name": "v1beta1", "served": True, "storage": False, "schema": CRD_SCHEMA},
            ],
        },
    },
}


def reported(kind: str, obj: Obj, old: Obj | None = None) -> list[str]:
    return [f"{c.field}: {c.message}" for c in problems(TYPES[kind], obj, old=old)]


def params(table: list[tuple[Any, ...]]) -> list[Any]:
    return [pytest.param(*case[1:], id=case[0]) for case in table]


REQ, INV, UNS = "FieldValueRequired", "FieldValueInvalid", "FieldValueNotSupported"
DUP, FORBID, LONG, MISSING = (
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueTooLong",
    "FieldValueNotFound",
)
SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
PORT_RANGE = "must be between 1 and 65535, inclusive"
CONTAINER = {"name": "a", "image": "x"}  # a minimal valid container to extend

# The changes that make the good NodePort Service an ExternalName one.
EXTERNAL = {"spec.type": "ExternalName", "spec.clusterIP": None, "spec.clusterIPs": None}


def check_reported(kind: str, changes: dict[str, Any], expected: str, reason: str) -> None:
    """Breaking the good `kind` object by `changes` yields a cause starting `expected`."""
    found = problems(TYPES[kind], edit(GOOD[kind], changes))
    matching = [c for c in found if f"{c.field}: {c.message}".startswith(expected)]
    assert matching, [f"{c.field}: {c.message}" for c in found]
    assert matching[0].reason == reason
