"""Object validation: every rule, good and bad, with Kubernetes' field paths and wording.

Each case starts from a valid object of its kind and changes one thing, given as dotted field
paths to set (None deletes), so a case names exactly the field it breaks. The case tables are
kept out of the formatter: one case per two or three lines reads as a table.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sandbox.errors import Invalid
from sandbox.registry import BUILTINS, ResourceType
from sandbox.validation import problems, validate

Obj = dict[str, Any]

_TYPES = {rt.kind: rt for rt in BUILTINS if rt.group not in ("events.k8s.io", "metrics.k8s.io")}


def _edit(base: Obj, changes: dict[str, Any]) -> Obj:
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
_SELECTOR = {"matchLabels": _WEB}
_CRD_SCHEMA = {"openAPIV3Schema": {"type": "object"}}

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
            "selector": _SELECTOR,
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
        "spec": {"replicas": 1, "selector": _SELECTOR, "template": _template(_WEB)},
    },
    "StatefulSet": {
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {
            "replicas": 1,
            "serviceName": "db",
            "selector": _SELECTOR,
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
        "spec": {"minAvailable": "50%", "selector": _SELECTOR},
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
                {"name": "v1", "served": True, "storage": True, "schema": _CRD_SCHEMA},
                {"name": "v1beta1", "served": True, "storage": False, "schema": _CRD_SCHEMA},
            ],
        },
    },
}


def _messages(kind: str, obj: Obj, old: Obj | None = None) -> list[str]:
    return [f"{c.field}: {c.message}" for c in problems(_TYPES[kind], obj, old=old)]


def _params(table: list[tuple[Any, ...]]) -> list[Any]:
    return [pytest.param(*case[1:], id=case[0]) for case in table]


@pytest.mark.parametrize("kind", sorted(GOOD))
def test_valid_objects_of_every_kind_pass(kind: str) -> None:
    assert _messages(kind, GOOD[kind]) == []
    validate(_TYPES[kind], GOOD[kind])


REQ, INV, UNS = "FieldValueRequired", "FieldValueInvalid", "FieldValueNotSupported"
DUP, FORBID, LONG, MISSING = (
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueTooLong",
    "FieldValueNotFound",
)
_SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
_LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
_PORT_RANGE = "must be between 1 and 65535, inclusive"
_C = {"name": "a", "image": "x"}  # a minimal valid container to extend

# (id, kind, changes to the good object, the start of one expected "field: message", reason)
# fmt: off
BAD: list[tuple[Any, ...]] = [
    # metadata
    ("name-not-subdomain", "ConfigMap", {"metadata.name": "Web_1"},
     f'metadata.name: Invalid value: "Web_1": {_SUBDOMAIN}', INV),
    ("name-missing", "ConfigMap", {"metadata.name": None},
     "metadata.name: Required value: name or generateName is required", REQ),
    ("name-too-long", "ConfigMap", {"metadata.name": "a" * 254},
     f'metadata.name: Invalid value: "{"a" * 254}": must be no more than 253 characters', INV),
    ("generate-name-invalid", "ConfigMap", {"metadata.generateName": "Bad_"},
     f'metadata.generateName: Invalid value: "Bad_": {_SUBDOMAIN}', INV),
    ("namespace-name-is-label", "Namespace", {"metadata.name": "a.b"},
     f'metadata.name: Invalid value: "a.b": {_LABEL}', INV),
    ("service-name-is-label", "Service", {"metadata.name": "web.v1"},
     f'metadata.name: Invalid value: "web.v1": {_LABEL}', INV),
    ("rbac-name-slash", "Role", {"metadata.name": "a/b"},
     "metadata.name: Invalid value: \"a/b\": may not contain '/'", INV),
    ("rbac-name-dotdot", "ClusterRole", {"metadata.name": ".."},
     "metadata.name: Invalid value: \"..\": may not be '..'", INV),
    ("namespace-missing", "ConfigMap", {"metadata.namespace": None},
     "metadata.namespace: Required value", REQ),
    ("namespace-invalid", "ConfigMap", {"metadata.namespace": "Shop"},
     f'metadata.namespace: Invalid value: "Shop": {_LABEL}', INV),
    ("label-value-too-long", "ConfigMap", {"metadata.labels": {"app": "v" * 64}},
     f'metadata.labels: Invalid value: "{"v" * 64}": must be no more than 63 characters', INV),
    ("label-value-format", "ConfigMap", {"metadata.labels": {"app": "-x"}},
     f'metadata.labels: Invalid value: "-x": {_LABEL_VALUE}', INV),
    ("label-key-empty-prefix", "ConfigMap", {"metadata.labels": {"/app": "x"}},
     'metadata.labels: Invalid value: "/app": prefix part must be non-empty', INV),
    ("label-key-prefix-uppercase", "ConfigMap", {"metadata.labels": {"Example.com/app": "x"}},
     f'metadata.labels: Invalid value: "Example.com/app": prefix part {_SUBDOMAIN}', INV),
    ("label-key-name-too-long", "ConfigMap", {"metadata.labels": {"k" * 64: "x"}},
     f'metadata.labels: Invalid value: "{"k" * 64}": name part must be no more than 63', INV),
    ("annotation-key", "ConfigMap", {"metadata.annotations": {"a b": "x"}},
     'metadata.annotations: Invalid value: "a b": name part must consist of alphanumeric', INV),
    ("annotations-too-big", "ConfigMap", {"metadata.annotations": {"big": "x" * 256 * 1024}},
     "metadata.annotations: Too long: may not be more than 262144 bytes", LONG),
    # Pod
    ("pod-no-containers", "Pod", {"spec.containers": [], "spec.initContainers": None},
     "spec.containers: Required value", REQ),
    ("pod-image-missing", "Pod", {"spec.containers": [{"name": "app"}]},
     "spec.containers[0].image: Required value", REQ),
    ("pod-container-name-missing", "Pod", {"spec.containers": [{"image": "x"}]},
     "spec.containers[0].name: Required value", REQ),
    ("pod-name-duplicates-init", "Pod", {"spec.containers": [{**_C, "name": "init"}]},
     'spec.containers[0].name: Duplicate value: "init"', DUP),
    ("pod-container-name-format", "Pod", {"spec.containers": [{**_C, "name": "App"}]},
     f'spec.containers[0].name: Invalid value: "App": {_LABEL}', INV),
    ("pod-image-whitespace", "Pod", {"spec.containers": [{**_C, "image": " x"}]},
     'spec.containers[0].image: Invalid value: " x": must not have leading or trailing '
     "whitespace", INV),
    ("pod-port-range", "Pod", {"spec.containers": [{**_C, "ports": [{"containerPort": 70000}]}]},
     f"spec.containers[0].ports[0].containerPort: Invalid value: 70000: {_PORT_RANGE}", INV),
    ("pod-host-port-range", "Pod",
     {"spec.containers": [{**_C, "ports": [{"containerPort": 1, "hostPort": -1}]}]},
     f"spec.containers[0].ports[0].hostPort: Invalid value: -1: {_PORT_RANGE}", INV),
    ("pod-port-missing", "Pod", {"spec.containers": [{**_C, "ports": [{"name": "http"}]}]},
     "spec.containers[0].ports[0].containerPort: Required value", REQ),
    ("pod-port-protocol", "Pod",
     {"spec.containers": [{**_C, "ports": [{"containerPort": 1, "protocol": "HTTP"}]}]},
     'spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": supported values: '
     '"SCTP", "TCP", "UDP"', UNS),
    ("pod-port-name", "Pod",
     {"spec.containers": [{**_C, "ports": [{"containerPort": 1, "name": "web--x"}]}]},
     'spec.containers[0].ports[0].name: Invalid value: "web--x": must not contain '
     "consecutive hyphens", INV),
    ("pod-port-name-duplicate", "Pod",
     {"spec.containers": [{**_C, "ports": [{"containerPort": 1, "name": "p"},
                                           {"containerPort": 2, "name": "p"}]}]},
     'spec.containers[0].ports[1].name: Duplicate value: "p"', DUP),
    ("pod-restart-policy", "Pod", {"spec.restartPolicy": "Sometimes"},
     'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", '
     '"OnFailure", "Never"', UNS),
    ("pod-request-above-limit", "Pod",
     {"spec.containers": [{**_C, "resources": {"requests": {"cpu": "2"},
                                               "limits": {"cpu": "500m"}}}]},
     'spec.containers[0].resources.requests[cpu]: Invalid value: "2": must be less than or '
     "equal to cpu limit of 500m", INV),
    ("pod-negative-quantity", "Pod",
     {"spec.containers": [{**_C, "resources": {"requests": {"memory": "-1Mi"}}}]},
     'spec.containers[0].resources.requests[memory]: Invalid value: "-1Mi": must be greater '
     "than or equal to 0", INV),
    ("pod-bad-quantity", "Pod",
     {"spec.containers": [{**_C, "resources": {"limits": {"memory": "lots"}}}]},
     'spec.containers[0].resources.limits[memory]: Invalid value: "lots": quantities must '
     "match the regular expression", INV),
    ("pod-mount-unknown-volume", "Pod",
     {"spec.containers": [{**_C, "volumeMounts": [{"name": "cache", "mountPath": "/c"}]}]},
     'spec.containers[0].volumeMounts[0].name: Not found: "cache"', MISSING),
    ("pod-mount-path-missing", "Pod",
     {"spec.containers": [{**_C, "volumeMounts": [{"name": "data"}]}]},
     "spec.containers[0].volumeMounts[0].mountPath: Required value", REQ),
    ("pod-volume-duplicate", "Pod", {"spec.volumes": [{"name": "data"}, {"name": "data"}]},
     'spec.volumes[1].name: Duplicate value: "data"', DUP),
    ("pod-env-name", "Pod", {"spec.containers": [{**_C, "env": [{"value": "1"}]}]},
     "spec.containers[0].env[0].name: Required value", REQ),
    ("pod-pull-policy", "Pod", {"spec.containers": [{**_C, "imagePullPolicy": "Sometimes"}]},
     'spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: '
     '"Always", "IfNotPresent", "Never"', UNS),
    # Deployment, ReplicaSet, StatefulSet, DaemonSet
    ("deployment-negative-replicas", "Deployment", {"spec.replicas": -1},
     "spec.replicas: Invalid value: -1: must be greater than or equal to 0", INV),
    ("deployment-selector-missing", "Deployment", {"spec.selector": None},
     "spec.selector: Required value", REQ),
    ("deployment-selector-mismatch", "Deployment", {"spec.selector.matchLabels": {"app": "db"}},
     'spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match '
     "template `labels`", INV),
    ("deployment-empty-selector", "Deployment", {"spec.selector": {}},
     "spec.selector: Invalid value: {}: empty selector is invalid for deployment", INV),
    ("deployment-selector-operator", "Deployment",
     {"spec.selector.matchExpressions": [{"key": "app", "operator": "Like"}]},
     'spec.selector.matchExpressions[0].operator: Invalid value: "Like": not a valid selector '
     "operator", INV),
    ("deployment-selector-in-without-values", "Deployment",
     {"spec.selector.matchExpressions": [{"key": "app", "operator": "In"}]},
     "spec.selector.matchExpressions[0].values: Required value: must be specified when "
     "`operator` is 'In' or 'NotIn'", REQ),
    ("deployment-selector-exists-with-values", "Deployment",
     {"spec.selector.matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
     "spec.selector.matchExpressions[0].values: Forbidden: may not be specified when "
     "`operator` is 'Exists' or 'DoesNotExist'", FORBID),
    ("deployment-template-missing", "Deployment", {"spec.template": None},
     "spec.template: Required value", REQ),
    ("deployment-template-image", "Deployment", {"spec.template.spec.containers": [{"name": "a"}]},
     "spec.template.spec.containers[0].image: Required value", REQ),
    ("deployment-template-label", "Deployment", {"spec.template.metadata.labels.app": "a b"},
     'spec.template.metadata.labels: Invalid value: "a b": a valid label must be', INV),
    ("deployment-template-restart-never", "Deployment",
     {"spec.template.spec.restartPolicy": "Never"},
     'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: '
     '"Always"', UNS),
    ("deployment-template-active-deadline", "Deployment",
     {"spec.template.spec.activeDeadlineSeconds": 5},
     "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in deployment "
     "is not Supported", FORBID),
    ("deployment-strategy-type", "Deployment", {"spec.strategy": {"type": "BlueGreen"}},
     'spec.strategy.type: Unsupported value: "BlueGreen": supported values: "Recreate", '
     '"RollingUpdate"', UNS),
    ("deployment-surge-and-unavailable-zero", "Deployment",
     {"spec.strategy.rollingUpdate": {"maxSurge": 0, "maxUnavailable": "0%"}},
     'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "0%": may not be 0 when '
     "`maxSurge` is 0", INV),
    ("deployment-unavailable-over-100", "Deployment",
     {"spec.strategy.rollingUpdate.maxUnavailable": "150%"},
     'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "150%": must not be greater '
     "than 100%", INV),
    ("deployment-surge-negative", "Deployment", {"spec.strategy.rollingUpdate.maxSurge": -1},
     "spec.strategy.rollingUpdate.maxSurge: Invalid value: -1: must be greater than or equal "
     "to 0", INV),
    ("deployment-recreate-with-rolling", "Deployment", {"spec.strategy.type": "Recreate"},
     "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is "
     "'Recreate'", FORBID),
    ("deployment-deadline-below-min-ready", "Deployment",
     {"spec.progressDeadlineSeconds": 5, "spec.minReadySeconds": 10},
     "spec.progressDeadlineSeconds: Invalid value: 5: must be greater than minReadySeconds", INV),
    ("deployment-history-negative", "Deployment", {"spec.revisionHistoryLimit": -1},
     "spec.revisionHistoryLimit: Invalid value: -1: must be greater than or equal to 0", INV),
    ("replicaset-selector-mismatch", "ReplicaSet",
     {"spec.template.metadata.labels": {"app": "other"}},
     'spec.template.metadata.labels: Invalid value: {"app":"other"}: `selector` does not '
     "match template `labels`", INV),
    ("replicaset-min-ready", "ReplicaSet", {"spec.minReadySeconds": -5},
     "spec.minReadySeconds: Invalid value: -5: must be greater than or equal to 0", INV),
    ("statefulset-pod-management", "StatefulSet", {"spec.podManagementPolicy": "Random"},
     "spec.podManagementPolicy: Invalid value: \"Random\": must be 'OrderedReady' or "
     "'Parallel'", INV),
    ("statefulset-update-strategy", "StatefulSet", {"spec.updateStrategy": {"type": "Sideways"}},
     "spec.updateStrategy: Invalid value: \"Sideways\": must be 'RollingUpdate' or 'OnDelete'",
     INV),
    ("statefulset-on-delete-with-rolling", "StatefulSet", {"spec.updateStrategy.type": "OnDelete"},
     'spec.updateStrategy.rollingUpdate: Invalid value: {"partition":0}: only allowed for '
     "updateStrategy 'RollingUpdate'", INV),
    ("statefulset-partition", "StatefulSet", {"spec.updateStrategy.rollingUpdate.partition": -1},
     "spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than", INV),
    ("statefulset-replicas", "StatefulSet", {"spec.replicas": -2},
     "spec.replicas: Invalid value: -2: must be greater than or equal to 0", INV),
    ("statefulset-empty-selector", "StatefulSet", {"spec.selector": {"matchLabels": {}}},
     'spec.selector: Invalid value: {"matchLabels":{}}: empty selector is invalid for '
     "statefulset", INV),
    ("daemonset-expression-mismatch", "DaemonSet",
     {"spec.selector.matchExpressions": [{"key": "app", "operator": "NotIn",
                                          "values": ["web"]}]},
     'spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match '
     "template `labels`", INV),
    ("daemonset-update-strategy", "DaemonSet", {"spec.updateStrategy.type": "Recreate"},
     'spec.updateStrategy.type: Unsupported value: "Recreate": supported values: "OnDelete", '
     '"RollingUpdate"', UNS),
    # Job and CronJob
    ("job-restart-always", "Job", {"spec.template.spec.restartPolicy": "Always"},
     'spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: '
     '"OnFailure", "Never"', UNS),
    ("job-restart-missing", "Job", {"spec.template.spec.restartPolicy": None},
     'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"', REQ),
    ("job-parallelism", "Job", {"spec.parallelism": -1},
     "spec.parallelism: Invalid value: -1: must be greater than or equal to 0", INV),
    ("job-completions", "Job", {"spec.completions": -3},
     "spec.completions: Invalid value: -3: must be greater than or equal to 0", INV),
    ("job-backoff", "Job", {"spec.backoffLimit": -1},
     "spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0", INV),
    ("job-completion-mode", "Job", {"spec.completionMode": "Ordered"},
     'spec.completionMode: Unsupported value: "Ordered": supported values: "NonIndexed", '
     '"Indexed"', UNS),
    ("job-indexed-without-completions", "Job",
     {"spec.completionMode": "Indexed", "spec.completions": None},
     "spec.completions: Required value: when completion mode is Indexed", REQ),
    ("job-manual-selector-mismatch", "Job", {"spec.selector": {"matchLabels": {"job": "x"}}},
     "spec.template.metadata.labels: Invalid value: {}: `selector` does not match template "
     "`labels`", INV),
    ("job-template-missing", "Job", {"spec.template": None},
     "spec.template: Required value", REQ),
    ("cronjob-schedule-missing", "CronJob", {"spec.schedule": None},
     "spec.schedule: Required value", REQ),
    ("cronjob-schedule-fields", "CronJob", {"spec.schedule": "every day"},
     'spec.schedule: Invalid value: "every day": expected exactly 5 fields, found 2: '
     "[every day]", INV),
    ("cronjob-name-too-long", "CronJob", {"metadata.name": "n" * 53},
     f'metadata.name: Invalid value: "{"n" * 53}": must be no more than 52 characters', INV),
    ("cronjob-tz-in-schedule", "CronJob", {"spec.schedule": "TZ=UTC 0 * * * *"},
     'spec.schedule: Invalid value: "TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in schedule, '
     "use timeZone field instead", INV),
    ("cronjob-concurrency", "CronJob", {"spec.concurrencyPolicy": "Sometimes"},
     'spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", '
     '"Forbid", "Replace"', UNS),
    ("cronjob-history-limit", "CronJob", {"spec.failedJobsHistoryLimit": -1},
     "spec.failedJobsHistoryLimit: Invalid value: -1: must be greater than or equal to 0", INV),
    ("cronjob-template-restart", "CronJob",
     {"spec.jobTemplate.spec.template.spec.restartPolicy": "Always"},
     'spec.jobTemplate.spec.template.spec.restartPolicy: Unsupported value: "Always": '
     'supported values: "OnFailure", "Never"', UNS),
    # Service
    ("service-type", "Service", {"spec.type": "Internal"},
     'spec.type: Unsupported value: "Internal": supported values: "ClusterIP", '
     '"ExternalName", "LoadBalancer", "NodePort"', UNS),
    ("service-ports-missing", "Service", {"spec.ports": []},
     "spec.ports: Required value", REQ),
    ("service-port-name-required-when-several", "Service",
     {"spec.ports": [{"port": 80}, {"name": "b", "port": 81}]},
     "spec.ports[0].name: Required value", REQ),
    ("service-port-name-duplicate", "Service",
     {"spec.ports": [{"name": "a", "port": 80}, {"name": "a", "port": 81}]},
     'spec.ports[1].name: Duplicate value: "a"', DUP),
    ("service-port-duplicate", "Service",
     {"spec.ports": [{"name": "a", "port": 80}, {"name": "b", "port": 80}]},
     'spec.ports[1]: Duplicate value: {"port":80,"protocol":"TCP"}', DUP),
    ("service-port-range", "Service", {"spec.ports": [{"port": 0}]},
     f"spec.ports[0].port: Invalid value: 0: {_PORT_RANGE}", INV),
    ("service-target-port-range", "Service", {"spec.ports": [{"port": 80, "targetPort": 70000}]},
     f"spec.ports[0].targetPort: Invalid value: 70000: {_PORT_RANGE}", INV),
    ("service-target-port-name", "Service", {"spec.ports": [{"port": 80, "targetPort": "8080"}]},
     'spec.ports[0].targetPort: Invalid value: "8080": must contain at least one letter (a-z)',
     INV),
    ("service-node-port-on-cluster-ip", "Service",
     {"spec.type": "ClusterIP", "spec.ports": [{"port": 80, "nodePort": 30001}]},
     "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'", FORBID),
    ("service-cluster-ip-format", "Service",
     {"spec.clusterIP": "10.96.0.300", "spec.clusterIPs": None},
     'spec.clusterIP: Invalid value: "10.96.0.300": must be a valid IP address, (e.g. '
     "10.9.8.7 or 2001:db8::ffff)", INV),
    ("service-cluster-ips-disagree", "Service", {"spec.clusterIPs": ["10.96.0.11"]},
     'spec.clusterIPs: Invalid value: ["10.96.0.11"]: first value must match `clusterIP`', INV),
    ("service-headless-node-port", "Service",
     {"spec.clusterIP": "None", "spec.clusterIPs": None},
     "spec.clusterIP: Invalid value: \"None\": may not be set to 'None' for NodePort services",
     INV),
    ("service-external-name-missing", "Service",
     {"spec.type": "ExternalName", "spec.clusterIP": None, "spec.clusterIPs": None,
      "spec.ports": None},
     "spec.externalName: Required value", REQ),
    ("service-external-name-format", "Service",
     {"spec.type": "ExternalName", "spec.externalName": "DB_host", "spec.clusterIP": None,
      "spec.clusterIPs": None},
     f'spec.externalName: Invalid value: "DB_host": {_SUBDOMAIN}', INV),
    ("service-external-name-with-cluster-ip", "Service",
     {"spec.type": "ExternalName", "spec.externalName": "db.example.com."},
     "spec.clusterIPs: Forbidden: may not be set for ExternalName services", FORBID),
    ("service-session-affinity", "Service", {"spec.sessionAffinity": "Sticky"},
     'spec.sessionAffinity: Unsupported value: "Sticky": supported values: "ClientIP", "None"',
     UNS),
    ("service-selector-value", "Service", {"spec.selector": {"app": "bad value"}},
     f'spec.selector: Invalid value: "bad value": {_LABEL_VALUE}', INV),
    # ConfigMap and Secret
    ("configmap-key-format", "ConfigMap", {"data": {"bad key": "x"}},
     'data[bad key]: Invalid value: "bad key": a valid config key must consist of alphanumeric '
     "characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex "
     "used for validation is '[-._a-zA-Z0-9]+')", INV),
    ("configmap-key-dotdot", "ConfigMap", {"data": {"..cfg": "x"}},
     "data[..cfg]: Invalid value: \"..cfg\": must not start with '..'", INV),
    ("configmap-key-dot", "ConfigMap", {"binaryData": {".": "AA=="}},
     "binaryData[.]: Invalid value: \".\": must not be '.'", INV),
    ("configmap-key-in-both", "ConfigMap", {"binaryData": {"LOG_LEVEL": "AA=="}},
     'binaryData[LOG_LEVEL]: Invalid value: "LOG_LEVEL": duplicate of key present in data', INV),
    ("configmap-too-big", "ConfigMap", {"data": {"big": "x" * 1024 * 1024}},
     "data: Too long: may not be more than 1048576 bytes", LONG),
    ("secret-not-base64", "Secret", {"data": {"tls.crt": "Y2VydA==", "tls.key": "not base64!"}},
     'data[tls.key]: Invalid value: "<secret contents redacted>": illegal base64 data at '
     "input byte 3", INV),
    ("secret-bad-padding", "Secret", {"data": {"tls.crt": "Y2VydA==", "tls.key": "abc"}},
     'data[tls.key]: Invalid value: "<secret contents redacted>": illegal base64 data at '
     "input byte 3", INV),
    ("secret-tls-missing-cert", "Secret", {"data": {"tls.key": "a2V5"}},
     "data[tls.crt]: Required value", REQ),
    ("secret-basic-auth-empty", "Secret", {"type": "kubernetes.io/basic-auth", "data": {}},
     "data[password]: Required value", REQ),
    ("secret-docker-config", "Secret", {"type": "kubernetes.io/dockerconfigjson"},
     "data[.dockerconfigjson]: Required value", REQ),
    ("secret-token-without-account", "Secret", {"type": "kubernetes.io/service-account-token"},
     "metadata.annotations[kubernetes.io/service-account.name]: Required value", REQ),
    ("secret-string-data-key", "Secret", {"stringData": {"a b": "x"}},
     'stringData[a b]: Invalid value: "a b": a valid config key must consist', INV),
    ("secret-too-big", "Secret", {"stringData": {"big": "x" * 1024 * 1024}},
     "data: Too long: may not be more than 1048576 bytes", LONG),
    # PodDisruptionBudget and HorizontalPodAutoscaler
    ("pdb-both-set", "PodDisruptionBudget", {"spec.maxUnavailable": 1},
     'spec: Invalid value: {"maxUnavailable":1,"minAvailable":"50%","selector":{"matchLabels":'
     '{"app":"web"}}}: minAvailable and maxUnavailable cannot be both set', INV),
    ("pdb-percent-format", "PodDisruptionBudget", {"spec.minAvailable": "half"},
     'spec.minAvailable: Invalid value: "half": a valid percent string must be a numeric '
     "string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is "
     "'[0-9]+%')", INV),
    ("pdb-negative", "PodDisruptionBudget", {"spec.minAvailable": -1},
     "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0", INV),
    ("pdb-over-100", "PodDisruptionBudget", {"spec.minAvailable": "101%"},
     'spec.minAvailable: Invalid value: "101%": must not be greater than 100%', INV),
    ("pdb-eviction-policy", "PodDisruptionBudget", {"spec.unhealthyPodEvictionPolicy": "Never"},
     'spec.unhealthyPodEvictionPolicy: Unsupported value: "Never": supported values: '
     '"AlwaysAllow", "IfHealthyBudget"', UNS),
    ("hpa-max-below-min", "HorizontalPodAutoscaler", {"spec.maxReplicas": 1},
     "spec.maxReplicas: Invalid value: 1: must be greater than or equal to `minReplicas`", INV),
    ("hpa-min-zero", "HorizontalPodAutoscaler", {"spec.minReplicas": 0},
     "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1", INV),
    ("hpa-max-missing", "HorizontalPodAutoscaler",
     {"spec.maxReplicas": None, "spec.minReplicas": None},
     "spec.maxReplicas: Invalid value: 0: must be greater than 0", INV),
    ("hpa-target-missing", "HorizontalPodAutoscaler", {"spec.scaleTargetRef": None},
     "spec.scaleTargetRef.kind: Required value", REQ),
    ("hpa-target-name", "HorizontalPodAutoscaler", {"spec.scaleTargetRef.name": "a%b"},
     "spec.scaleTargetRef.name: Invalid value: \"a%b\": may not contain '%'", INV),
    ("hpa-metric-type", "HorizontalPodAutoscaler", {"spec.metrics": [{"type": "Magic"}]},
     'spec.metrics[0].type: Unsupported value: "Magic": supported values: '
     '"ContainerResource", "External", "Object", "Pods", "Resource"', UNS),
    # RBAC
    ("rolebinding-role-ref-missing", "RoleBinding", {"roleRef": None},
     "roleRef.name: Required value", REQ),
    ("rolebinding-role-ref-kind", "RoleBinding", {"roleRef.kind": "Group"},
     'roleRef.kind: Unsupported value: "Group": supported values: "Role", "ClusterRole"', UNS),
    ("rolebinding-role-ref-group", "RoleBinding", {"roleRef.apiGroup": "rbac"},
     'roleRef.apiGroup: Unsupported value: "rbac": supported values: '
     '"rbac.authorization.k8s.io"', UNS),
    ("rolebinding-subject-kind", "RoleBinding", {"subjects": [{"kind": "Robot", "name": "r2"}]},
     'subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", '
     '"User", "Group"', UNS),
    ("rolebinding-subject-name", "RoleBinding", {"subjects": [{"kind": "User"}]},
     "subjects[0].name: Required value", REQ),
    ("rolebinding-account-api-group", "RoleBinding",
     {"subjects": [{"kind": "ServiceAccount", "name": "x", "apiGroup": "v1"}]},
     'subjects[0].apiGroup: Unsupported value: "v1": supported values: ""', UNS),
    ("clusterrolebinding-role-kind", "ClusterRoleBinding", {"roleRef.kind": "Role"},
     'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"', UNS),
    ("clusterrolebinding-account-namespace", "ClusterRoleBinding",
     {"subjects": [{"kind": "ServiceAccount", "name": "default"}]},
     "subjects[0].namespace: Required value", REQ),
    ("role-verbs", "Role", {"rules": [{"apiGroups": [""], "resources": ["pods"]}]},
     "rules[0].verbs: Required value: verbs must contain at least one value", REQ),
    ("role-api-groups", "Role", {"rules": [{"resources": ["pods"], "verbs": ["get"]}]},
     "rules[0].apiGroups: Required value: resource rules must supply at least one api group",
     REQ),
    ("role-resources", "Role", {"rules": [{"apiGroups": [""], "verbs": ["get"]}]},
     "rules[0].resources: Required value: resource rules must supply at least one resource",
     REQ),
    ("role-non-resource-url", "Role", {"rules": [{"nonResourceURLs": ["/x"], "verbs": ["get"]}]},
     'rules[0].nonResourceURLs: Invalid value: ["/x"]: namespaced rules cannot apply to '
     "non-resource URLs", INV),
    ("clusterrole-mixed-rule", "ClusterRole",
     {"rules": [{"nonResourceURLs": ["/x"], "resources": ["pods"], "verbs": ["get"]}]},
     'rules[0].nonResourceURLs: Invalid value: ["/x"]: rules cannot apply to both regular '
     "resources and non-resource URLs", INV),
    # Node, PVC, Lease
    ("node-taint-effect", "Node", {"spec.taints": [{"key": "a", "effect": "Evict"}]},
     'spec.taints[0].effect: Unsupported value: "Evict": supported values: "NoSchedule", '
     '"PreferNoSchedule", "NoExecute"', UNS),
    ("node-taint-key", "Node", {"spec.taints": [{"key": "a b", "effect": "NoSchedule"}]},
     'spec.taints[0].key: Invalid value: "a b": name part must consist', INV),
    ("node-taint-duplicate", "Node",
     {"spec.taints": [{"key": "a", "effect": "NoSchedule"},
                      {"key": "a", "effect": "NoSchedule", "value": "x"}]},
     'spec.taints[1]: Duplicate value: {"effect":"NoSchedule","key":"a","value":"x"}: taints '
     "must be unique by key and effect pair", DUP),
    ("node-pod-cidr", "Node", {"spec.podCIDR": "10.0.0.0"},
     'spec.podCIDR: Invalid value: "10.0.0.0": must be a valid CIDR value, (e.g. 10.9.8.0/24 '
     "or 2001:db8::/64)", INV),
    ("pvc-access-modes-missing", "PersistentVolumeClaim", {"spec.accessModes": None},
     "spec.accessModes: Required value: at least 1 access mode is required", REQ),
    ("pvc-access-mode", "PersistentVolumeClaim", {"spec.accessModes": ["ReadWriteSometimes"]},
     'spec.accessModes: Unsupported value: "ReadWriteSometimes": supported values: '
     '"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"', UNS),
    ("pvc-rwop-combined", "PersistentVolumeClaim",
     {"spec.accessModes": ["ReadWriteOncePod", "ReadOnlyMany"]},
     "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes", FORBID),
    ("pvc-storage-missing", "PersistentVolumeClaim",
     {"spec.resources.requests": {"cpu": "1"}},
     "spec.resources[storage]: Required value", REQ),
    ("pvc-storage-zero", "PersistentVolumeClaim", {"spec.resources.requests.storage": "0Gi"},
     'spec.resources[storage]: Invalid value: "0Gi": must be greater than zero', INV),
    ("pvc-volume-mode", "PersistentVolumeClaim", {"spec.volumeMode": "Raw"},
     'spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem"', UNS),
    ("lease-duration", "Lease", {"spec.leaseDurationSeconds": 0},
     "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0", INV),
    ("lease-transitions", "Lease", {"spec.leaseTransitions": -1},
     "spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0", INV),
    # CustomResourceDefinition
    ("crd-name-mismatch", "CustomResourceDefinition", {"metadata.name": "widgets.example.org"},
     'metadata.name: Invalid value: "widgets.example.org": must be '
     'spec.names.plural+"."+spec.group', INV),
    ("crd-group-without-dot", "CustomResourceDefinition",
     {"metadata.name": "widgets.example", "spec.group": "example"},
     'spec.group: Invalid value: "example": should be a domain with at least one dot', INV),
    ("crd-group-missing", "CustomResourceDefinition", {"spec.group": None},
     "spec.group: Required value", REQ),
    ("crd-scope", "CustomResourceDefinition", {"spec.scope": "Global"},
     'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"', UNS),
    ("crd-kind-missing", "CustomResourceDefinition", {"spec.names.kind": None},
     "spec.names.kind: Required value", REQ),
    ("crd-kind-format", "CustomResourceDefinition", {"spec.names.kind": "Wid get"},
     'spec.names.kind: Invalid value: "Wid get": may have mixed case, but should otherwise '
     "match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
     "start with an alphabetic character, and end with an alphanumeric character (e.g. "
     "'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')", INV),
    ("crd-list-kind-same-as-kind", "CustomResourceDefinition", {"spec.names.listKind": "Widget"},
     'spec.names.listKind: Invalid value: "Widget": kind and listKind may not be the same', INV),
    ("crd-plural-format", "CustomResourceDefinition",
     {"metadata.name": "Widgets.example.com", "spec.names.plural": "Widgets"},
     'spec.names.plural: Invalid value: "Widgets": a DNS-1035 label must consist', INV),
    ("crd-two-storage-versions", "CustomResourceDefinition",
     {"spec.versions": [{"name": "v1", "storage": True, "schema": _CRD_SCHEMA},
                        {"name": "v2", "storage": True, "schema": _CRD_SCHEMA}]},
     'spec.versions: Invalid value: ["v1","v2"]: must have exactly one version marked as '
     "storage version", INV),
    ("crd-duplicate-versions", "CustomResourceDefinition",
     {"spec.versions": [{"name": "v1", "storage": True, "schema": _CRD_SCHEMA},
                        {"name": "v1", "schema": _CRD_SCHEMA}]},
     'spec.versions: Invalid value: ["v1","v1"]: must contain unique version names', INV),
    ("crd-schema-missing", "CustomResourceDefinition",
     {"spec.versions": [{"name": "v1", "storage": True}]},
     "spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required", REQ),
    ("crd-no-versions", "CustomResourceDefinition", {"spec.versions": []},
     "spec.versions: Required value: must have exactly one version marked as storage version",
     REQ),
]
# fmt: on


@pytest.mark.parametrize(("kind", "changes", "expected", "reason"), _params(BAD))
def test_invalid_objects_are_reported_in_kubernetes_words(
    kind: str, changes: dict[str, Any], expected: str, reason: str
) -> None:
    found = problems(_TYPES[kind], _edit(GOOD[kind], changes))
    matching = [c for c in found if f"{c.field}: {c.message}".startswith(expected)]
    assert matching, [f"{c.field}: {c.message}" for c in found]
    assert matching[0].reason == reason


_HEADLESS = {"spec.clusterIP": "None", "spec.clusterIPs": None, "spec.type": "ClusterIP"}
_EXTERNAL = {"spec.type": "ExternalName", "spec.clusterIP": None, "spec.clusterIPs": None}

# fmt: off
GOOD_VARIANTS: list[tuple[Any, ...]] = [
    ("headless-service-without-ports", "Service", {**_HEADLESS, "spec.ports": None}),
    ("external-name-service", "Service",
     {**_EXTERNAL, "spec.externalName": "db.example.com.", "spec.ports": None}),
    ("single-anonymous-port", "Service", {"spec.ports": [{"port": 80}]}),
    ("generate-name-only", "ConfigMap", {"metadata.name": None, "metadata.generateName": "cfg-"}),
    ("job-on-failure", "Job", {"spec.template.spec.restartPolicy": "OnFailure"}),
    ("cron-descriptor", "CronJob", {"spec.schedule": "@hourly"}),
    ("cron-every", "CronJob", {"spec.schedule": "@every 1h30m"}),
    ("cron-question-mark-and-step", "CronJob", {"spec.schedule": "0 0 ? * 0-6/2"}),
    ("cron-lists-and-names", "CronJob", {"spec.schedule": "0,30 9-17 1,15 jan-jun,DEC SUN"}),
    ("deployment-recreate", "Deployment", {"spec.strategy": {"type": "Recreate"}}),
    ("deployment-defaults-not-yet-applied", "Deployment", {"spec.strategy": None}),
    ("expression-selector", "Deployment",
     {"spec.selector.matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}),
    ("basic-auth-string-data", "Secret",
     {"type": "kubernetes.io/basic-auth", "data": None, "stringData": {"username": "u"}}),
    ("opaque-empty-value", "Secret", {"type": None, "data": {"k": ""}}),
    ("pdb-max-unavailable", "PodDisruptionBudget",
     {"spec": {"maxUnavailable": 1}}),
    ("aggregated-clusterrole", "ClusterRole",
     {"rules": None, "aggregationRule": {"clusterRoleSelectors": [{}]}}),
    ("group-without-api-group", "RoleBinding", {"subjects": [{"kind": "Group", "name": "devs"}]}),
    ("quantities", "Pod",
     {"spec.containers": [{**_C, "resources": {"limits": {"cpu": "2", "memory": "1Gi"},
                                               "requests": {"cpu": "1500m",
                                                            "memory": "1e3"}}}]}),
    ("numeric-storage", "PersistentVolumeClaim", {"spec.resources.requests.storage": 1073741824}),
    ("same-taint-key-other-effect", "Node",
     {"spec.taints": [{"key": "a", "effect": "NoSchedule"}, {"key": "a", "effect": "NoExecute"}]}),
    ("ipv6-cluster-ip", "Service", {"spec.clusterIP": "fd00::10", "spec.clusterIPs": None}),
    ("wrongly-typed-fields-are-left-to-schema-checks", "Deployment",
     {"spec.replicas": "3", "spec.strategy": "fast", "metadata.labels": ["a"]}),
]
# fmt: on


@pytest.mark.parametrize(("kind", "changes"), _params(GOOD_VARIANTS))
def test_valid_variants_pass(kind: str, changes: dict[str, Any]) -> None:
    assert _messages(kind, _edit(GOOD[kind], changes)) == []


def test_validate_raises_one_invalid_listing_every_problem() -> None:
    obj = _edit(GOOD["Deployment"], {"spec.replicas": -1, "spec.selector": None})
    with pytest.raises(Invalid) as caught:
        validate(_TYPES["Deployment"], obj)
    status = caught.value.status()
    assert status["code"] == 422
    assert status["details"]["kind"] == "Deployment"
    assert status["details"]["group"] == "apps"
    assert status["details"]["name"] == "web"
    assert status["message"] == (
        'Deployment.apps "web" is invalid: [spec.replicas: Invalid value: -1: must be greater '
        "than or equal to 0, spec.selector: Required value]"
    )
    assert [c["reason"] for c in status["details"]["causes"]] == [
        "FieldValueInvalid",
        "FieldValueRequired",
    ]


def test_custom_resources_get_metadata_checks_only() -> None:
    widget = ResourceType("example.com", "v1", "widgets", "Widget", True, custom=True)
    assert problems(widget, {"metadata": {"name": "w", "namespace": "default"}, "spec": 1}) == []
    (cause,) = problems(widget, {"metadata": {"name": "W", "namespace": "default"}})
    assert cause.field == "metadata.name"


def test_reviews_are_not_validated() -> None:
    review = next(rt for rt in BUILTINS if rt.kind == "SelfSubjectAccessReview")
    validate(review, {"spec": {"resourceAttributes": {"verb": "get"}}})


def test_a_namespace_on_a_cluster_scoped_object_is_ignored() -> None:
    assert _messages("Namespace", {"metadata": {"name": "shop", "namespace": "Bad_Ns"}}) == []


@pytest.mark.parametrize("kind", sorted(GOOD))
def test_validation_never_mutates_its_inputs(kind: str) -> None:
    obj = _edit(GOOD[kind], {"metadata.uid": "u1"})
    old = _edit(obj, {"spec.replicas": 7, "spec.nodeName": "n", "immutable": True})
    before = copy.deepcopy((obj, old))
    problems(_TYPES[kind], obj, old=old)
    assert (obj, old) == before


_junk = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 70000) | st.sampled_from(["", "x", "None", "1Gi"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["name", "image", "type", "app", "key", "x"]), inner)
    ),
    max_leaves=8,
)
_PLACES = [
    "spec", "metadata", "metadata.labels", "data", "type", "roleRef", "subjects", "rules",
    "spec.selector", "spec.template", "spec.template.spec", "spec.template.spec.containers",
    "spec.containers", "spec.ports", "spec.strategy", "spec.versions", "spec.names",
    "spec.jobTemplate", "spec.taints", "spec.resources", "spec.minAvailable", "spec.clusterIP",
]  # fmt: skip


@given(st.sampled_from(sorted(GOOD)), st.sampled_from(_PLACES), _junk)
def test_malformed_objects_never_crash_validation(kind: str, place: str, junk: Any) -> None:
    bad = _edit(GOOD[kind], {place: junk})
    for obj, old in ((bad, None), (bad, GOOD[kind]), (GOOD[kind], bad)):
        assert isinstance(problems(_TYPES[kind], obj, old=old), list)


# -- updates ------------------------------------------------------------------------------------

_POD_RULE = (
    "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only "
    "additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set "
    "to 1 if it was previously negative)"
)
_LOCKED = "Forbidden: field is immutable when `immutable` is set"
_POD_APP = GOOD["Pod"]["spec"]["containers"][0]

# (id, kind, changes making the stored object, changes making the update, expected message)
# fmt: off
IMMUTABLE: list[tuple[Any, ...]] = [
    ("uid", "ConfigMap", {}, {"metadata.uid": "other"},
     'metadata.uid: Invalid value: "other": field is immutable'),
    ("name", "ConfigMap", {}, {"metadata.name": "renamed"},
     'metadata.name: Invalid value: "renamed": field is immutable'),
    ("namespace", "ConfigMap", {}, {"metadata.namespace": "prod"},
     'metadata.namespace: Invalid value: "prod": field is immutable'),
    ("deployment-selector", "Deployment", {},
     {"spec.selector.matchLabels": {"app": "web", "v": "2"},
      "spec.template.metadata.labels": {"app": "web", "v": "2"}},
     'spec.selector: Invalid value: {"matchLabels":{"app":"web","v":"2"}}: field is immutable'),
    ("replicaset-selector", "ReplicaSet", {},
     {"spec.selector.matchExpressions": [{"key": "app", "operator": "Exists"}]},
     "spec.selector: Invalid value: {"),
    ("daemonset-selector", "DaemonSet", {}, {"spec.selector": {"matchLabels": {"app": "web"}}},
     'spec.selector: Invalid value: {"matchLabels":{"app":"web"}}: field is immutable'),
    ("statefulset-service-name", "StatefulSet", {}, {"spec.serviceName": "other"},
     "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', "
     "'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', "
     "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"),
    ("statefulset-selector", "StatefulSet", {},
     {"spec.selector.matchExpressions": [{"key": "app", "operator": "Exists"}]},
     "spec: Forbidden: updates to statefulset spec"),
    ("job-template", "Job", {},
     {"spec.template.spec.containers": [{"name": "app", "image": "nginx:1.28"}]},
     "spec.template: Invalid value: {"),
    ("job-selector", "Job",
     {"spec.selector": {"matchLabels": {"c": "1"}}, "spec.template.metadata.labels": {"c": "1"}},
     {"spec.selector": {"matchLabels": {"c": "2"}}, "spec.template.metadata.labels": {"c": "2"}},
     'spec.selector: Invalid value: {"matchLabels":{"c":"2"}}: field is immutable'),
    ("pod-node-name", "Pod", {}, {"spec.nodeName": "node2"},
     f"{_POD_RULE}\nchanged: spec.nodeName"),
    ("pod-container-ports", "Pod", {},
     {"spec.containers": [{**_POD_APP, "image": "nginx:1.28", "ports": []}]},
     f"{_POD_RULE}\nchanged: spec.containers"),
    ("pod-remove-container", "Pod", {}, {"spec.initContainers": None},
     "spec.initContainers: Forbidden: pod updates may not add or remove containers"),
    ("pod-remove-toleration", "Pod", {}, {"spec.tolerations": []},
     "spec.tolerations: Forbidden: existing toleration can not be modified except its "
     "tolerationSeconds"),
    ("pod-deadline-increase", "Pod",
     {"spec.activeDeadlineSeconds": 30}, {"spec.activeDeadlineSeconds": 60},
     "spec.activeDeadlineSeconds: Invalid value: 60: must be less than or equal to previous "
     "value"),
    ("pod-deadline-unset", "Pod",
     {"spec.activeDeadlineSeconds": 30}, {"spec.activeDeadlineSeconds": None},
     "spec.activeDeadlineSeconds: Invalid value: null: must not update from a positive integer "
     "to nil value"),
    ("pod-grace-period", "Pod",
     {"spec.terminationGracePeriodSeconds": 30}, {"spec.terminationGracePeriodSeconds": 1},
     f"{_POD_RULE}\nchanged: spec.terminationGracePeriodSeconds"),
    ("service-cluster-ip", "Service", {},
     {"spec.clusterIP": "10.96.0.11", "spec.clusterIPs": ["10.96.0.11"]},
     'spec.clusterIP: Invalid value: "10.96.0.11": field is immutable'),
    ("service-cluster-ips", "Service", {},
     {"spec.clusterIP": None, "spec.clusterIPs": ["10.96.0.12"]},
     'spec.clusterIPs[0]: Invalid value: ["10.96.0.12"]: may not change once set'),
    ("pvc-access-modes", "PersistentVolumeClaim", {}, {"spec.accessModes": ["ReadWriteMany"]},
     "spec: Forbidden: spec is immutable after creation except resources.requests and "
     "volumeAttributesClassName for bound claims"),
    ("pvc-rebind", "PersistentVolumeClaim", {"spec.volumeName": "pv-1"},
     {"spec.volumeName": "pv-2"}, "spec: Forbidden: spec is immutable after creation"),
    ("pvc-shrink", "PersistentVolumeClaim", {}, {"spec.resources.requests.storage": "512Mi"},
     "spec.resources.requests.storage: Forbidden: field can not be less than previous value"),
    ("configmap-immutable-data", "ConfigMap", {"immutable": True},
     {"data": {"LOG_LEVEL": "info"}}, f"data: {_LOCKED}"),
    ("configmap-immutable-binary-data", "ConfigMap", {"immutable": True}, {"binaryData": None},
     f"binaryData: {_LOCKED}"),
    ("configmap-unlock", "ConfigMap", {"immutable": True}, {"immutable": False},
     f"immutable: {_LOCKED}"),
    ("secret-immutable-string-data", "Secret", {"immutable": True},
     {"stringData": {"tls.key": "new"}}, f"data: {_LOCKED}"),
    ("secret-type", "Secret", {}, {"type": "Opaque"},
     'type: Invalid value: "Opaque": field is immutable'),
    ("rolebinding-role-ref", "RoleBinding", {}, {"roleRef.name": "writer"},
     'roleRef: Invalid value: {"apiGroup":"rbac.authorization.k8s.io","kind":"Role",'
     '"name":"writer"}: cannot change roleRef'),
    ("clusterrolebinding-role-ref", "ClusterRoleBinding", {}, {"roleRef.name": "admin"},
     "roleRef: Invalid value: {"),
    ("crd-scope", "CustomResourceDefinition", {}, {"spec.scope": "Cluster"},
     'spec.scope: Invalid value: "Cluster": field is immutable'),
    ("crd-group", "CustomResourceDefinition", {},
     {"metadata.name": "widgets.example.org", "spec.group": "example.org"},
     'spec.group: Invalid value: "example.org": field is immutable'),
    ("crd-kind", "CustomResourceDefinition", {}, {"spec.names.kind": "Gadget"},
     'spec.names.kind: Invalid value: "Gadget": field is immutable'),
]
# fmt: on


@pytest.mark.parametrize(("kind", "stored", "change", "expected"), _params(IMMUTABLE))
def test_updates_to_immutable_fields_are_rejected(
    kind: str, stored: dict[str, Any], change: dict[str, Any], expected: str
) -> None:
    old = _edit(GOOD[kind], {"metadata.uid": "u1", **stored})
    new = _edit(old, change)
    messages = _messages(kind, new, old)
    assert any(m.startswith(expected) for m in messages), messages
    with pytest.raises(Invalid):
        validate(_TYPES[kind], new, old=old)


# fmt: off
ALLOWED_UPDATES: list[tuple[Any, ...]] = [
    ("deployment-scale-and-image", "Deployment", {},
     {"spec.replicas": 9, "spec.template.spec.containers": [{"name": "app", "image": "nginx:2"}]}),
    ("deployment-empty-expressions-equal-absent", "Deployment",
     {"spec.selector.matchExpressions": []}, {"spec.selector": _SELECTOR}),
    ("statefulset-allowed-fields", "StatefulSet", {},
     {"spec.replicas": 4, "spec.minReadySeconds": 5, "spec.updateStrategy": {"type": "OnDelete"},
      "spec.template.spec.containers": [{"name": "app", "image": "nginx:2"}]}),
    ("pod-image", "Pod", {}, {"spec.containers": [{**_POD_APP, "image": "nginx:1.28"}]}),
    ("pod-init-image", "Pod", {},
     {"spec.initContainers": [{"name": "init", "image": "busybox:2"}]}),
    ("pod-labels", "Pod", {}, {"metadata.labels": {"app": "web", "extra": "1"}}),
    ("pod-add-toleration", "Pod", {},
     {"spec.tolerations": [
         {"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5},
         {"key": "new", "operator": "Exists"}]}),
    ("pod-deadline-decrease", "Pod",
     {"spec.activeDeadlineSeconds": 60}, {"spec.activeDeadlineSeconds": 30}),
    ("pod-deadline-set", "Pod", {}, {"spec.activeDeadlineSeconds": 30}),
    ("pod-grace-negative-to-one", "Pod",
     {"spec.terminationGracePeriodSeconds": -1}, {"spec.terminationGracePeriodSeconds": 1}),
    ("pod-status-only", "Pod", {}, {"status": {"phase": "Running"}}),
    ("service-allocate-ip", "Service", {"spec.clusterIP": "", "spec.clusterIPs": None},
     {"spec.clusterIP": "10.96.0.99"}),
    ("service-to-external-name", "Service", {},
     {**_EXTERNAL, "spec.externalName": "x.example.com", "spec.ports": [{"port": 80}]}),
    ("service-ports", "Service", {}, {"spec.ports": [{"port": 8080}]}),
    ("pvc-grow-and-bind", "PersistentVolumeClaim", {},
     {"spec.resources.requests.storage": "2Gi", "spec.volumeName": "pv-1"}),
    ("configmap-mutable", "ConfigMap", {}, {"data": {"LOG_LEVEL": "info"}}),
    ("immutable-configmap-labels", "ConfigMap", {"immutable": True},
     {"metadata.labels": {"x": "y"}}),
    ("configmap-lock", "ConfigMap", {}, {"immutable": True}),
    ("secret-data", "Secret", {}, {"data": {"tls.crt": "Y2VydA==", "tls.key": "bmV3"}}),
    ("secret-immutable-same-string-data", "Secret",
     {"immutable": True, "type": "Opaque", "data": {"k": "dg=="}},
     {"stringData": {"k": "v"}, "data": {}}),
    ("rolebinding-subjects", "RoleBinding", {}, {"subjects": [{"kind": "User", "name": "joe"}]}),
    ("crd-short-names", "CustomResourceDefinition", {}, {"spec.names.shortNames": ["wd"]}),
    ("omitted-uid-means-unchanged", "ConfigMap", {}, {"metadata.uid": None}),
]
# fmt: on


@pytest.mark.parametrize(("kind", "stored", "change"), _params(ALLOWED_UPDATES))
def test_allowed_updates_pass(kind: str, stored: dict[str, Any], change: dict[str, Any]) -> None:
    old = _edit(GOOD[kind], {"metadata.uid": "u1", **stored})
    assert _messages(kind, _edit(old, change), old) == []


def test_subresource_writes_skip_the_resources_update_rules() -> None:
    old = _edit(GOOD["Pod"], {"metadata.uid": "u1"})
    bound = _edit(old, {"spec.nodeName": "node-2"})
    assert _messages("Pod", bound, old)  # a plain update may not schedule a pod ...
    assert problems(_TYPES["Pod"], bound, old=old, subresource="binding") == []  # ... binding may
    renamed = _edit(bound, {"metadata.name": "other"})
    assert problems(_TYPES["Pod"], renamed, old=old, subresource="binding")


# fmt: off
SCHEDULES: list[tuple[str, str, str]] = [
    ("minute-range", "60 * * * *", "end of range (60) above maximum (59): 60"),
    ("reversed", "* 5-1 * * *", "beginning of range (5) beyond end of range (1): 5-1"),
    ("day-zero", "* * 0 * *", "beginning of range (0) below minimum (1): 0"),
    ("month-13", "* * * 13 *", "end of range (13) above maximum (12): 13"),
    ("weekday-7", "* * * * 7", "end of range (7) above maximum (6): 7"),
    ("zero-step", "*/0 * * * *", "step of range should be a positive number: */0"),
    ("hyphens", "1-2-3 * * * *", "too many hyphens: 1-2-3"),
    ("slashes", "1/2/3 * * * *", "too many slashes: 1/2/3"),
    ("word", "x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'),
    ("negative", "-1 * * * *", 'failed to parse int from : strconv.Atoi: parsing "": invalid'),
    ("descriptor", "@fortnightly", "unrecognized descriptor: @fortnightly"),
    ("every-bad-duration", "@every soon",
     'failed to parse duration @every soon: time: invalid duration "soon"'),
    ("four-fields", "* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
]
# fmt: on


@pytest.mark.parametrize(("schedule", "message"), _params(SCHEDULES))
def test_cron_schedules_are_checked_like_kubernetes(schedule: str, message: str) -> None:
    obj = _edit(GOOD["CronJob"], {"spec.schedule": schedule})
    expected = f'spec.schedule: Invalid value: "{schedule}": {message}'
    assert any(m.startswith(expected) for m in _messages("CronJob", obj)), _messages("CronJob", obj)
