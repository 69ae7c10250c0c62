"""The entry point: `validate(rt, obj, old=...)` runs every rule that applies to one write.

Two tables drive it, keyed by (group, kind): the create-time rules of each built-in kind and
the update-time immutability rules. Every write gets metadata checks with the kind's name
format; custom resources get only those (their schema is checked elsewhere). All problems are
collected and raised together as one 422, as Kubernetes does, so a user fixes a manifest in
one round trip.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from sandbox import errors
from sandbox.registry import VIRTUAL_GROUPS, ResourceType
from sandbox.validation import (
    availability,
    cluster,
    config,
    crds,
    custom,
    immutable,
    meta,
    pods,
    rbac,
    services,
    workloads,
)
from sandbox.validation.payload import mapping, text

Rule = Callable[[Mapping[str, Any]], list[errors.Cause]]
UpdateRule = Callable[[Mapping[str, Any], Mapping[str, Any]], list[errors.Cause]]

_RBAC = "rbac.authorization.k8s.io"

RULES: Mapping[tuple[str, str], Rule] = MappingProxyType(
    {
        ("", "Pod"): pods.validate_pod,
        ("", "Service"): services.validate_service,
        ("", "ConfigMap"): config.validate_config_map,
        ("", "Secret"): config.validate_secret,
        ("", "Node"): cluster.validate_node,
        ("", "PersistentVolumeClaim"): cluster.validate_persistent_volume_claim,
        ("apps", "Deployment"): workloads.validate_deployment,
        ("apps", "ReplicaSet"): workloads.validate_replica_set,
        ("apps", "StatefulSet"): workloads.validate_stateful_set,
        ("apps", "DaemonSet"): workloads.validate_daemon_set,
        ("batch", "Job"): workloads.validate_job,
        ("batch", "CronJob"): workloads.validate_cron_job,
        ("policy", "PodDisruptionBudget"): availability.validate_pod_disruption_budget,
        ("autoscaling", "HorizontalPodAutoscaler"): (
            availability.validate_horizontal_pod_autoscaler
        ),
        (_RBAC, "Role"): rbac.validate_role,
        (_RBAC, "ClusterRole"): rbac.validate_cluster_role,
        (_RBAC, "RoleBinding"): rbac.validate_role_binding,
        (_RBAC, "ClusterRoleBinding"): rbac.validate_cluster_role_binding,
        ("coordination.k8s.io", "Lease"): cluster.validate_lease,
        ("apiextensions.k8s.io", "CustomResourceDefinition"): (
            crds.validate_custom_resource_definition
        ),
    }
)

UPDATE_RULES: Mapping[tuple[str, str], UpdateRule] = MappingProxyType(
    {
        ("", "Pod"): immutable.pod,
        ("", "Service"): immutable.service,
        ("", "PersistentVolumeClaim"): immutable.persistent_volume_claim,
        ("", "ConfigMap"): immutable.config_map,
        ("", "Secret"): immutable.secret,
        ("apps", "Deployment"): immutable.selector,
        ("apps", "ReplicaSet"): immutable.selector,
        ("apps", "DaemonSet"): immutable.selector,
        ("apps", "StatefulSet"): immutable.stateful_set,
        ("batch", "Job"): immutable.job,
        (_RBAC, "RoleBinding"): immutable.role_binding,
        (_RBAC, "ClusterRoleBinding"): immutable.role_binding,
        ("apiextensions.k8s.io", "CustomResourceDefinition"): immutable.custom_resource_definition,
    }
)

# Kinds whose names are not DNS subdomains: namespaces and services become DNS labels, RBAC
# names travel as URL path segments.
NAME_CHECKS: Mapping[tuple[str, str], meta.NameCheck] = MappingProxyType(
    {
        ("", "Namespace"): meta.label_name,
        ("", "Service"): meta.label_name,
        (_RBAC, "Role"): meta.path_segment_name,
        (_RBAC, "ClusterRole"): meta.path_segment_name,
        (_RBAC, "RoleBinding"): meta.path_segment_name,
        (_RBAC, "ClusterRoleBinding"): meta.path_segment_name,
    }
)


def problems(
    rt: ResourceType,
    obj: Mapping[str, Any],
    *,
    old: Mapping[str, Any] | None = None,
    subresource: str = "",
) -> list[errors.Cause]:
    """Every cause `validate` would raise, in order: metadata, spec, then update rules."""
    if rt.group in VIRTUAL_GROUPS or "create" not in rt.verbs:
        return []  # reviews are answered, never stored; metrics are read-only
    key = (rt.group, rt.kind)
    found = meta.validate_metadata(
        obj, namespaced=rt.namespaced, name_check=NAME_CHECKS.get(key, meta.subdomain_name)
    )
    rule = None if rt.custom else RULES.get(key)
    if rule is not None:
        found += rule(obj)
    if rt.custom and rt.schema:
        found += custom.schema_problems(rt.schema, obj)
    if old is not None:
        found += immutable.metadata(obj, old)
        # A subresource write (status, binding, scale) changes only what its handler allows,
        # as Kubernetes' per-subresource strategies do, so the resource's update rules (such
        # as "pod updates may not change spec.nodeName") do not apply to it.
        update = None if rt.custom or subresource else UPDATE_RULES.get(key)
        if update is not None:
            found += update(obj, old)
    return found


def validate(
    rt: ResourceType,
    obj: dict[str, Any],
    *,
    old: dict[str, Any] | None = None,
    subresource: str = "",
) -> None:
    """Raise `errors.Invalid` listing every problem with a write of `obj` (an update if `old`)."""
    found = problems(rt, obj, old=old, subresource=subresource)
    if found:
        name = text(mapping(obj, "metadata"), "name")
        raise errors.invalid(rt.kind, rt.group, name, found)
