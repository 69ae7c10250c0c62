"""Validation of Services, ConfigMaps and Secrets: ports, cluster IPs, ExternalName, session
affinity, config keys, sizes and the typed Secrets' required keys, reported with Kubernetes' field
paths and wording.

Each case starts from the valid object of its kind in `GOOD` and changes one thing, given as
dotted field paths to set (None deletes), so a case names exactly the field it breaks. The case
table is kept out of the formatter: one case per two or three lines reads as a table.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.sandbox.validation_objects import (
    DUP,
    FORBID,
    INV,
    LABEL_VALUE,
    LONG,
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
     f"spec.ports[0].port: Invalid value: 0: {PORT_RANGE}", INV),
    ("service-target-port-range", "Service", {"spec.ports": [{"port": 80, "targetPort": 70000}]},
     f"spec.ports[0].targetPort: Invalid value: 70000: {PORT_RANGE}", INV),
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
     f'spec.externalName: Invalid value: "DB_host": {SUBDOMAIN}', INV),
    ("service-external-name-with-cluster-ip", "Service",
     {"spec.type": "ExternalName", "spec.externalName": "db.example.com."},
     "spec.clusterIPs: Forbidden: may not be set for ExternalName services", FORBID),
    ("service-session-affinity", "Service", {"spec.sessionAffinity": "Sticky"},
     'spec.sessionAffinity: Unsupported value: "Sticky": supported values: "ClientIP", "None"',
     UNS),
    ("service-selector-value", "Service", {"spec.selector": {"app": "bad value"}},
     f'spec.selector: Invalid value: "bad value": {LABEL_VALUE}', INV),
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
]
# fmt: on


@pytest.mark.parametrize(("kind", "changes", "expected", "reason"), params(BAD))
def test_invalid_objects_are_reported_in_kubernetes_words(
    kind: str, changes: dict[str, Any], expected: str, reason: str
) -> None:
    check_reported(kind, changes, expected, reason)
