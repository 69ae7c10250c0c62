"""Validation of updates: fields Kubernetes makes immutable (metadata identity, selectors, Pod
specs, Service IPs, PVC specs, immutable ConfigMaps and Secrets, role references, CRD identity)
are rejected with its wording, allowed updates pass, and subresource writes skip the rules.
"""

from __future__ import annotations

from typing import Any

import pytest

from sandbox.errors import Invalid
from sandbox.validation import problems, validate
from tests.sandbox.validation_objects import (
    EXTERNAL,
    GOOD,
    SELECTOR,
    TYPES,
    edit,
    params,
    reported,
)

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


@pytest.mark.parametrize(("kind", "stored", "change", "expected"), params(IMMUTABLE))
def test_updates_to_immutable_fields_are_rejected(
    kind: str, stored: dict[str, Any], change: dict[str, Any], expected: str
) -> None:
    old = edit(GOOD[kind], {"metadata.uid": "u1", **stored})
    new = edit(old, change)
    messages = reported(kind, new, old)
    assert any(m.startswith(expected) for m in messages), messages
    with pytest.raises(Invalid):
        validate(TYPES[kind], new, old=old)


# fmt: off
ALLOWED_UPDATES: list[tuple[Any, ...]] = [
    ("deployment-scale-and-image", "Deployment", {},
     {"spec.replicas": 9, "spec.template.spec.containers": [{"name": "app", "image": "nginx:2"}]}),
    ("deployment-empty-expressions-equal-absent", "Deployment",
     {"spec.selector.matchExpressions": []}, {"spec.selector": SELECTOR}),
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
     {**EXTERNAL, "spec.externalName": "x.example.com", "spec.ports": [{"port": 80}]}),
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


@pytest.mark.parametrize(("kind", "stored", "change"), params(ALLOWED_UPDATES))
def test_allowed_updates_pass(kind: str, stored: dict[str, Any], change: dict[str, Any]) -> None:
    old = edit(GOOD[kind], {"metadata.uid": "u1", **stored})
    assert reported(kind, edit(old, change), old) == []


def test_subresource_writes_skip_the_resources_update_rules() -> None:
    old = edit(GOOD["Pod"], {"metadata.uid": "u1"})
    bound = edit(old, {"spec.nodeName": "node-2"})
    assert reported("Pod", bound, old)  # a plain update may not schedule a pod ...
    assert problems(TYPES["Pod"], bound, old=old, subresource="binding") == []  # ... binding may
    renamed = edit(bound, {"metadata.name": "other"})
    assert problems(TYPES["Pod"], renamed, old=old, subresource="binding")
