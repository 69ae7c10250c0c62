"""From a NamespaceBlueprint to the objects it means in one namespace, and what "in sync" means.

Pure functions, like `rendering` for egress: the same blueprint, namespace and team render the
same bytes on every run, so a rerun reuses its PR and the live comparison has one reference.
Each object is named after the blueprint and labelled as the Platform's. The team's RoleBinding
binds the blueprint's ClusterRole to the owning team's groups and users (from its Ownership
document); with no owner known it is not rendered, and the namespace is reported for it.

Only the fields the blueprint sets are compared (`COMPARED`): a ResourceQuota's `status`, a
RoleBinding's annotations and the like are the cluster's or the owners'.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agents.platform.rendering import MANAGED_LABEL, MANAGER
from core.policy.documents.blueprint import NamespaceBlueprint

BLUEPRINT_LABEL = "kubecrew.io/blueprint"
RBAC = "rbac.authorization.k8s.io"
COMPARED: dict[str, list[str]] = {
    "ResourceQuota": ["spec"],
    "LimitRange": ["spec"],
    "NetworkPolicy": ["spec"],
    "RoleBinding": ["roleRef", "subjects"],
}


@dataclass(frozen=True)
class Team:
    """The namespace's owning team as its Ownership document says."""

    name: str
    groups: tuple[str, ...] = ()
    users: tuple[str, ...] = ()


def render(
    blueprint: NamespaceBlueprint, namespace: str, team: Team | None
) -> list[dict[str, Any]]:
    """The objects `blueprint` asks for in `namespace`, in a fixed order."""
    spec, name = blueprint.spec, blueprint.metadata.name

    def obj(api: str, kind: str, body: dict[str, Any]) -> dict[str, Any]:
        labels = {BLUEPRINT_LABEL: name, MANAGED_LABEL: MANAGER}
        meta = {"name": name, "namespace": namespace, "labels": labels}
        return {"apiVersion": api, "kind": kind, "metadata": meta, **body}

    found: list[dict[str, Any]] = []
    if spec.resourceQuota is not None:
        found.append(obj("v1", "ResourceQuota", {"spec": {"hard": dict(spec.resourceQuota.hard)}}))
    if spec.limitRange is not None:
        item: dict[str, Any] = {"type": "Container"}
        item.update(spec.limitRange.model_dump(exclude_defaults=True))
        found.append(obj("v1", "LimitRange", {"spec": {"limits": [item]}}))
    if spec.networkPolicy is not None:
        ingress: list[dict[str, Any]] = [{"from": [{"podSelector": {}}]}]
        rules = ingress if spec.networkPolicy.ingress == "same-namespace" else []
        body = {"podSelector": {}, "policyTypes": ["Ingress"], "ingress": rules}
        found.append(obj("networking.k8s.io/v1", "NetworkPolicy", {"spec": body}))
    if spec.teamAccess is not None and team is not None and (team.groups or team.users):
        subjects = [{"kind": "Group", "apiGroup": RBAC, "name": g} for g in team.groups] + [
            {"kind": "User", "apiGroup": RBAC, "name": u} for u in team.users
        ]
        role = {"apiGroup": RBAC, "kind": "ClusterRole", "name": spec.teamAccess.clusterRole}
        found.append(obj(f"{RBAC}/v1", "RoleBinding", {"roleRef": role, "subjects": subjects}))
    return found


def missing_labels(blueprint: NamespaceBlueprint, labels: dict[str, str]) -> list[str]:
    return [key for key in blueprint.spec.requiredLabels if not labels.get(key)]
