"""Validation of object metadata and Pods: names, namespaces, labels and annotations on any
kind, and Pod containers, ports, resources, volumes and env, reported with Kubernetes' field paths
and wording.

Each case starts from the valid object of its kind in `GOOD` and changes one thing, given as
dotted field paths to set (None deletes), so a case names exactly the field it breaks. The case
table is kept out of the formatter: one case per two or three lines reads as a table.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.sandbox.validation_objects import (
    CONTAINER,
    DUP,
    INV,
    LABEL,
    LABEL_VALUE,
    LONG,
    MISSING,
    PORT_RANGE,
    REQ,
    SUBDOMAIN,
    UNS,
    check_reported,
    params,
)

# (id, kind, changes to the good object, the start of one expected "field: message", reason)
# fmt: off
BAD: list[tuple[Any, ...]] = [
    # metadata
    ("name-not-subdomain", "ConfigMap", {"metadata.name": "Web_1"},
     f'metadata.name: Invalid value: "Web_1": {SUBDOMAIN}', INV),
    ("name-missing", "ConfigMap", {"metadata.name": None},
     "metadata.name: Required value: name or generateName is required", REQ),
    ("name-too-long", "ConfigMap", {"metadata.name": "a" * 254},
     f'metadata.name: Invalid value: "{"a" * 254}": must be no more than 253 characters', INV),
    ("generate-name-invalid", "ConfigMap", {"metadata.generateName": "Bad_"},
     f'metadata.generateName: Invalid value: "Bad_": {SUBDOMAIN}', INV),
    ("namespace-name-is-label", "Namespace", {"metadata.name": "a.b"},
     f'metadata.name: Invalid value: "a.b": {LABEL}', INV),
    ("service-name-is-label", "Service", {"metadata.name": "web.v1"},
     f'metadata.name: Invalid value: "web.v1": {LABEL}', INV),
    ("rbac-name-slash", "Role", {"metadata.name": "a/b"},
     "metadata.name: Invalid value: \"a/b\": may not contain '/'", INV),
    ("rbac-name-dotdot", "ClusterRole", {"metadata.name": ".."},
     "metadata.name: Invalid value: \"..\": may not be '..'", INV),
    ("namespace-missing", "ConfigMap", {"metadata.namespace": None},
     "metadata.namespace: Required value", REQ),
    ("namespace-invalid", "ConfigMap", {"metadata.namespace": "Shop"},
     f'metadata.namespace: Invalid value: "Shop": {LABEL}', INV),
    ("label-value-too-long", "ConfigMap", {"metadata.labels": {"app": "v" * 64}},
     f'metadata.labels: Invalid value: "{"v" * 64}": must be no more than 63 characters', INV),
    ("label-value-format", "ConfigMap", {"metadata.labels": {"app": "-x"}},
     f'metadata.labels: Invalid value: "-x": {LABEL_VALUE}', INV),
    ("label-key-empty-prefix", "ConfigMap", {"metadata.labels": {"/app": "x"}},
     'metadata.labels: Invalid value: "/app": prefix part must be non-empty', INV),
    ("label-key-prefix-uppercase", "ConfigMap", {"metadata.labels": {"Example.com/app": "x"}},
     f'metadata.labels: Invalid value: "Example.com/app": prefix part {SUBDOMAIN}', INV),
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
    ("pod-name-duplicates-init", "Pod", {"spec.containers": [{**CONTAINER, "name": "init"}]},
     'spec.containers[0].name: Duplicate value: "init"', DUP),
    ("pod-container-name-format", "Pod", {"spec.containers": [{**CONTAINER, "name": "App"}]},
     f'spec.containers[0].name: Invalid value: "App": {LABEL}', INV),
    ("pod-image-whitespace", "Pod", {"spec.containers": [{**CONTAINER, "image": " x"}]},
     'spec.containers[0].image: Invalid value: " x": must not have leading or trailing '
     "whitespace", INV),
    ("pod-port-range", "Pod",
     {"spec.containers": [{**CONTAINER, "ports": [{"containerPort": 70000}]}]},
     f"spec.containers[0].ports[0].containerPort: Invalid value: 70000: {PORT_RANGE}", INV),
    ("pod-host-port-range", "Pod",
     {"spec.containers": [{**CONTAINER, "ports": [{"containerPort": 1, "hostPort": -1}]}]},
     f"spec.containers[0].ports[0].hostPort: Invalid value: -1: {PORT_RANGE}", INV),
    ("pod-port-missing", "Pod", {"spec.containers": [{**CONTAINER, "ports": [{"name": "http"}]}]},
     "spec.containers[0].ports[0].containerPort: Required value", REQ),
    ("pod-port-protocol", "Pod",
     {"spec.containers": [{**CONTAINER, "ports": [{"containerPort": 1, "protocol": "HTTP"}]}]},
     'spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": supported values: '
     '"SCTP", "TCP", "UDP"', UNS),
    ("pod-port-name", "Pod",
     {"spec.containers": [{**CONTAINER, "ports": [{"containerPort": 1, "name": "web--x"}]}]},
     'spec.containers[0].ports[0].name: Invalid value: "web--x": must not contain '
     "consecutive hyphens", INV),
    ("pod-port-name-duplicate", "Pod",
     {"spec.containers": [{**CONTAINER, "ports": [{"containerPort": 1, "name": "p"},
                                           {"containerPort": 2, "name": "p"}]}]},
     'spec.containers[0].ports[1].name: Duplicate value: "p"', DUP),
    ("pod-restart-policy", "Pod", {"spec.restartPolicy": "Sometimes"},
     'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", '
     '"OnFailure", "Never"', UNS),
    ("pod-request-above-limit", "Pod",
     {"spec.containers": [{**CONTAINER, "resources": {"requests": {"cpu": "2"},
                                               "limits": {"cpu": "500m"}}}]},
     'spec.containers[0].resources.requests[cpu]: Invalid value: "2": must be less than or '
     "equal to cpu limit of 500m", INV),
    ("pod-negative-quantity", "Pod",
     {"spec.containers": [{**CONTAINER, "resources": {"requests": {"memory": "-1Mi"}}}]},
     'spec.containers[0].resources.requests[memory]: Invalid value: "-1Mi": must be greater '
     "than or equal to 0", INV),
    ("pod-bad-quantity", "Pod",
     {"spec.containers": [{**CONTAINER, "resources": {"limits": {"memory": "lots"}}}]},
     'spec.containers[0].resources.limits[memory]: Invalid value: "lots": quantities must '
     "match the regular expression", INV),
    ("pod-mount-unknown-volume", "Pod",
     {"spec.containers": [{**CONTAINER, "volumeMounts": [{"name": "cache", "mountPath": "/c"}]}]},
     'spec.containers[0].volumeMounts[0].name: Not found: "cache"', MISSING),
    ("pod-mount-path-missing", "Pod",
     {"spec.containers": [{**CONTAINER, "volumeMounts": [{"name": "data"}]}]},
     "spec.containers[0].volumeMounts[0].mountPath: Required value", REQ),
    ("pod-volume-duplicate", "Pod", {"spec.volumes": [{"name": "data"}, {"name": "data"}]},
     'spec.volumes[1].name: Duplicate value: "data"', DUP),
    ("pod-env-name", "Pod", {"spec.containers": [{**CONTAINER, "env": [{"value": "1"}]}]},
     "spec.containers[0].env[0].name: Required value", REQ),
    ("pod-pull-policy", "Pod", {"spec.containers": [{**CONTAINER, "imagePullPolicy": "Sometimes"}]},
     'spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: '
     '"Always", "IfNotPresent", "Never"', UNS),
]
# fmt: on


@pytest.mark.parametrize(("kind", "changes", "expected", "reason"), params(BAD))
def test_invalid_objects_are_reported_in_kubernetes_words(
    kind: str, changes: dict[str, Any], expected: str, reason: str
) -> None:
    check_reported(kind, changes, expected, reason)
