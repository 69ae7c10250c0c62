"""Rules for RBAC objects: Role and ClusterRole rules, RoleBinding and ClusterRoleBinding
references and subjects.

Only shape is judged here (a binding names a role of an allowed kind, subjects are well formed).
Whether the referenced role exists, or whether the writer may grant it, is the authorizer's
business, not validation's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sandbox.errors import Cause
from sandbox.validation import causes, names
from sandbox.validation.payload import items, mapping, strings, text

RBAC_GROUP = "rbac.authorization.k8s.io"
SUBJECT_KINDS = ("ServiceAccount", "User", "Group")


def validate_role(obj: Mapping[str, Any]) -> list[Cause]:
    return _rules(obj, namespaced=True)


def validate_cluster_role(obj: Mapping[str, Any]) -> list[Cause]:
    # An aggregated ClusterRole gets its rules from the aggregation controller.
    return _rules(obj, namespaced=False)


def validate_role_binding(obj: Mapping[str, Any]) -> list[Cause]:
    return _binding(obj, role_kinds=("Role", "ClusterRole"), namespaced=True)


def validate_cluster_role_binding(obj: Mapping[str, Any]) -> list[Cause]:
    return _binding(obj, role_kinds=("ClusterRole",), namespaced=False)


def _rules(obj: Mapping[str, Any], *, namespaced: bool) -> list[Cause]:
    found: list[Cause] = []
    for i, rule in enumerate(items(obj, "rules")):
        found += _rule(rule, f"rules[{i}]", namespaced=namespaced)
    return found


def _rule(rule: Mapping[str, Any], path: str, *, namespaced: bool) -> list[Cause]:
    found: list[Cause] = []
    if not strings(rule, "verbs"):
        found.append(causes.required(f"{path}.verbs", "verbs must contain at least one value"))
    urls = strings(rule, "nonResourceURLs")
    if urls:
        if namespaced:
            found.append(
                causes.invalid(
                    f"{path}.nonResourceURLs",
                    urls,
                    "namespaced rules cannot apply to non-resource URLs",
                )
            )
        if any(strings(rule, key) for key in ("apiGroups", "resources", "resourceNames")):
            found.append(
                causes.invalid(
                    f"{path}.nonResourceURLs",
                    urls,
                    "rules cannot apply to both regular resources and non-resource URLs",
                )
            )
        return found
    if not isinstance(rule.get("apiGroups"), list) or not rule["apiGroups"]:
        found.append(
            causes.required(
                f"{path}.apiGroups", "resource rules must supply at least one api group"
            )
        )
    if not strings(rule, "resources"):
        found.append(
            causes.required(f"{path}.resources", "resource rules must supply at least one resource")
        )
    return found


def _binding(
    obj: Mapping[str, Any], *, role_kinds: tuple[str, ...], namespaced: bool
) -> list[Cause]:
    ref = mapping(obj, "roleRef")
    found: list[Cause] = []
    if text(ref, "apiGroup") != RBAC_GROUP:
        found.append(
            causes.not_supported("roleRef.apiGroup", ref.get("apiGroup", ""), (RBAC_GROUP,))
        )
    if text(ref, "kind") not in role_kinds:
        found.append(causes.not_supported("roleRef.kind", ref.get("kind", ""), role_kinds))
    name = text(ref, "name")
    if not name:
        found.append(causes.required("roleRef.name"))
    else:
        found += causes.invalid_each("roleRef.name", name, names.path_segment(name))
    for i, subject in enumerate(items(obj, "subjects")):
        found += _subject(subject, f"subjects[{i}]", namespaced=namespaced)
    return found


def _subject(subject: Mapping[str, Any], path: str, *, namespaced: bool) -> list[Cause]:
    found: list[Cause] = []
    name = text(subject, "name")
    if not name:
        found.append(causes.required(f"{path}.name"))
    kind = subject.get("kind")
    group = subject.get("apiGroup")
    if kind == "ServiceAccount":
        if name:
            found += causes.invalid_each(f"{path}.name", name, names.dns1123_subdomain(name))
        if group:
            found.append(causes.not_supported(f"{path}.apiGroup", group, ("",)))
        # A cluster-wide binding cannot guess which namespace the account lives in.
        if not namespaced and not text(subject, "namespace"):
            found.append(causes.required(f"{path}.namespace"))
    elif kind in ("User", "Group"):
        # An absent apiGroup is what the API server's defaulting fills with the RBAC group.
        if group is not None and group != RBAC_GROUP:
            found.append(causes.not_supported(f"{path}.apiGroup", group, (RBAC_GROUP,)))
    else:
        found.append(causes.not_supported(f"{path}.kind", kind or "", SUBJECT_KINDS))
    return found
