"""Validation of RBAC, Nodes, storage, Leases and CustomResourceDefinitions: role references
and subjects, policy rules, taints and pod CIDRs, PVC access modes and sizes, lease durations, and
CRD names, groups and versions, reported with Kubernetes' field paths and wording.

Each case starts from the valid object of its kind in `GOOD` and changes one thing, given as
dotted field paths to set (None deletes), so a case names exactly the field it breaks. The case
table is kept out of the formatter: one case per two or three lines reads as a table.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.sandbox.validation_objects import (
    CRD_SCHEMA,
    DUP,
    FORBID,
    INV,
    REQ,
    UNS,
    check_reported,
    params,
)

# (id, kind, changes to the good object, the start of one expected "field: message", reason)
# fmt: off
BAD: list[tuple[Any, ...]] = [
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
     {"spec.versions": [{"name": "v1", "storage": True, "schema": CRD_SCHEMA},
                        {"name": "v2", "storage": True, "schema": CRD_SCHEMA}]},
     'spec.versions: Invalid value: ["v1","v2"]: must have exactly one version marked as '
     "storage version", INV),
    ("crd-duplicate-versions", "CustomResourceDefinition",
     {"spec.versions": [{"name": "v1", "storage": True, "schema": CRD_SCHEMA},
                        {"name": "v1", "schema": CRD_SCHEMA}]},
     'spec.versions: Invalid value: ["v1","v1"]: must contain unique version names', INV),
    ("crd-schema-missing", "CustomResourceDefinition",
     {"spec.versions": [{"name": "v1", "storage": True}]},
     "spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required", REQ),
    ("crd-no-versions", "CustomResourceDefinition", {"spec.versions": []},
     "spec.versions: Required value: must have exactly one version marked as storage version",
     REQ),
]
# fmt: on


@pytest.mark.parametrize(("kind", "changes", "expected", "reason"), params(BAD))
def test_invalid_objects_are_reported_in_kubernetes_words(
    kind: str, changes: dict[str, Any], expected: str, reason: str
) -> None:
    check_reported(kind, changes, expected, reason)
