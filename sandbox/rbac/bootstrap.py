"""The ClusterRoles and ClusterRoleBindings a fresh cluster starts with.

These are the facts of Kubernetes 1.37's bootstrap RBAC policy (what `kubectl get clusterroles`
shows on a new cluster), limited to what matters for the API groups Kubernetes still serves:
`cluster-admin` bound to the `system:masters` group; the user-facing `admin`, `edit` and `view`
roles, aggregated from the `system:aggregate-to-*` roles plus metrics-server's
`system:aggregated-metrics-reader` (so `kubectl top` works for viewers); and the roles every
identity holds (`system:basic-user`, `system:discovery`, `system:public-info-viewer`).
`view` deliberately cannot read secrets; only `edit` and `admin` can.

One deliberate difference: `system:discovery` is also bound to `system:unauthenticated` (real
clusters dropped that in 1.14), so a client without credentials gets a clear 403 on the resource it
asked for instead of a discovery failure.

Aggregated roles are returned with their `rules` already filled, as the aggregation controller of a
real cluster would leave them. Every call builds new dicts, so callers may store or change them.
This module knows nothing of storage or evaluation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sandbox.auth import AUTHENTICATED, UNAUTHENTICATED
from sandbox.rbac.aggregation import aggregated_rules

API_VERSION = "rbac.authorization.k8s.io/v1"
BOOTSTRAP_LABELS = {"kubernetes.io/bootstrapping": "rbac-defaults"}
AUTOUPDATE = {"rbac.authorization.kubernetes.io/autoupdate": "true"}
AGGREGATE_TO = "rbac.authorization.k8s.io/aggregate-to-"

READ = ("get", "list", "watch")
WRITE = ("create", "delete", "deletecollection", "patch", "update")
READ_WRITE = READ + WRITE


def _rule(groups: Sequence[str], resources: Sequence[str], verbs: Sequence[str]) -> dict[str, Any]:
    # The real bootstrap policy sorts every list of a rule.
    return {"apiGroups": sorted(groups), "resources": sorted(resources), "verbs": sorted(verbs)}


def _urls(*urls: str) -> dict[str, Any]:
    return {"nonResourceURLs": sorted(urls), "verbs": ["get"]}


def _view_rules() -> list[dict[str, Any]]:
    return [
        _rule([""], ["configmaps", "endpoints", "persistentvolumeclaims",
                     "persistentvolumeclaims/status", "pods", "replicationcontrollers",
                     "replicationcontrollers/scale", "serviceaccounts", "services",
                     "services/status"], READ),
        _rule([""], ["bindings", "events", "limitranges", "namespaces/status", "pods/log",
                     "pods/status", "replicationcontrollers/status", "resourcequotas",
                     "resourcequotas/status"], READ),
        _rule([""], ["namespaces"], READ),
        _rule(["discovery.k8s.io"], ["endpointslices"], READ),
        _rule(["apps"], ["controllerrevisions", "daemonsets", "daemonsets/status", "deployments",
                         "deployments/scale", "deployments/status", "replicasets",
                         "replicasets/scale", "replicasets/status", "statefulsets",
                         "statefulsets/scale", "statefulsets/status"], READ),
        _rule(["autoscaling"], ["horizontalpodautoscalers", "horizontalpodautoscalers/status"],
              READ),
        _rule(["batch"], ["cronjobs", "cronjobs/status", "jobs", "jobs/status"], READ),
        _rule(["policy"], ["poddisruptionbudgets", "poddisruptionbudgets/status"], READ),
        _rule(["networking.k8s.io"], ["ingresses", "ingresses/status", "networkpolicies"], READ),
    ]  # fmt: skip


def _edit_rules() -> list[dict[str, Any]]:
    pod_access = ["pods/attach", "pods/exec", "pods/portforward", "pods/proxy"]
    return [
        _rule([""], [*pod_access, "secrets", "services/proxy"], READ),
        _rule([""], ["serviceaccounts"], ["impersonate"]),
        _rule([""], ["pods", *pod_access], WRITE),
        _rule([""], ["pods/eviction"], ["create"]),
        _rule([""], ["configmaps", "events", "persistentvolumeclaims", "replicationcontrollers",
                     "replicationcontrollers/scale", "secrets", "serviceaccounts", "services",
                     "services/proxy"], WRITE),
        _rule([""], ["serviceaccounts/token"], ["create"]),
        _rule(["apps"], ["daemonsets", "deployments", "deployments/rollback", "deployments/scale",
                         "replicasets", "replicasets/scale", "statefulsets",
                         "statefulsets/scale"], WRITE),
        _rule(["autoscaling"], ["horizontalpodautoscalers"], WRITE),
        _rule(["batch"], ["cronjobs", "jobs"], WRITE),
        _rule(["policy"], ["poddisruptionbudgets"], WRITE),
        _rule(["networking.k8s.io"], ["ingresses", "networkpolicies"], WRITE),
        _rule(["coordination.k8s.io"], ["leases"], READ_WRITE),
    ]  # fmt: skip


def _admin_rules() -> list[dict[str, Any]]:
    return [
        _rule(["authorization.k8s.io"], ["localsubjectaccessreviews"], ["create"]),
        _rule(["rbac.authorization.k8s.io"], ["rolebindings", "roles"], READ_WRITE),
    ]


def _cluster_role(
    name: str,
    rules: list[dict[str, Any]],
    *,
    labels: dict[str, str] | None = None,
    aggregate_from: str = "",
) -> dict[str, Any]:
    role: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": "ClusterRole",
        "metadata": {
            "name": name,
            "labels": {**BOOTSTRAP_LABELS, **(labels or {})},
            "annotations": dict(AUTOUPDATE),
        },
    }
    if aggregate_from:
        selector = {"matchLabels": {f"{AGGREGATE_TO}{aggregate_from}": "true"}}
        role["aggregationRule"] = {"clusterRoleSelectors": [selector]}
    role["rules"] = rules
    return role


def _binding(name: str, role: str, *groups: str) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "ClusterRoleBinding",
        "metadata": {
            "name": name,
            "labels": dict(BOOTSTRAP_LABELS),
            "annotations": dict(AUTOUPDATE),
        },
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group}
            for group in groups
        ],
    }


def _metrics_reader() -> dict[str, Any]:
    """metrics-server's reader role: not an rbac-default, so it lacks the bootstrapping label."""
    labels = {"k8s-app": "metrics-server"}
    labels.update({f"{AGGREGATE_TO}{level}": "true" for level in ("admin", "edit", "view")})
    return {
        "apiVersion": API_VERSION,
        "kind": "ClusterRole",
        "metadata": {"name": "system:aggregated-metrics-reader", "labels": labels},
        "rules": [_rule(["metrics.k8s.io"], ["nodes", "pods"], READ)],
    }


def _cluster_roles() -> list[dict[str, Any]]:
    everything = [
        {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
        {"nonResourceURLs": ["*"], "verbs": ["*"]},
    ]
    roles = [
        _cluster_role("cluster-admin", everything),
        _cluster_role("admin", [], aggregate_from="admin"),
        _cluster_role("edit", [], labels={f"{AGGREGATE_TO}admin": "true"}, aggregate_from="edit"),
        _cluster_role("view", [], labels={f"{AGGREGATE_TO}edit": "true"}, aggregate_from="view"),
        _cluster_role("system:aggregate-to-admin", _admin_rules(),
                      labels={f"{AGGREGATE_TO}admin": "true"}),
        _cluster_role("system:aggregate-to-edit", _edit_rules(),
                      labels={f"{AGGREGATE_TO}edit": "true"}),
        _cluster_role("system:aggregate-to-view", _view_rules(),
                      labels={f"{AGGREGATE_TO}view": "true"}),
        _metrics_reader(),
        _cluster_role("system:basic-user", [
            _rule(["authorization.k8s.io"],
                  ["selfsubjectaccessreviews", "selfsubjectrulesreviews"], ["create"]),
            _rule(["authentication.k8s.io"], ["selfsubjectreviews"], ["create"]),
        ]),
        _cluster_role("system:discovery", [
            _urls("/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi",
                  "/openapi/*", "/readyz", "/version", "/version/"),
        ]),
        _cluster_role("system:public-info-viewer", [
            _urls("/healthz", "/livez", "/readyz", "/version", "/version/"),
        ]),
        _cluster_role("system:monitoring", [
            _urls("/healthz", "/healthz/*", "/livez", "/livez/*", "/metrics", "/metrics/slis",
                  "/readyz", "/readyz/*"),
        ]),
    ]  # fmt: skip
    for role in roles:
        if "aggregationRule" in role:
            role["rules"] = aggregated_rules(role, roles)
    return roles


def bootstrap_objects() -> list[dict[str, Any]]:
    """The default ClusterRoles, then the default ClusterRoleBindings."""
    bindings = [
        _binding("cluster-admin", "cluster-admin", "system:masters"),
        _binding("system:basic-user", "system:basic-user", AUTHENTICATED),
        _binding("system:discovery", "system:discovery", AUTHENTICATED, UNAUTHENTICATED),
        _binding(
            "system:public-info-viewer", "system:public-info-viewer", AUTHENTICATED,
            UNAUTHENTICATED,
        ),
        _binding("system:monitoring", "system:monitoring", "system:monitoring"),
    ]  # fmt: skip
    return [*_cluster_roles(), *bindings]
