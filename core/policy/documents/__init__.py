"""The policy kinds, Kubernetes-style (`apiVersion: kubecrew.io/v1alpha1`, kind, metadata, spec).

One module per kind, the shared parts in `common` and `selectors`. The same documents live in git
(`policies/`) and, later, as custom resources; `loading` turns YAML into these models.
"""

from __future__ import annotations

from core.policy.documents.blueprint import NamespaceBlueprint
from core.policy.documents.capacity import CapacityPolicy
from core.policy.documents.change import ChangePolicy
from core.policy.documents.common import API_VERSION, Concern
from core.policy.documents.cost import CostPolicy
from core.policy.documents.egress import EgressPolicy
from core.policy.documents.images import ImagePolicy
from core.policy.documents.patch import PatchPolicy
from core.policy.documents.priority import Ownership, PriorityPolicy
from core.policy.documents.readiness import NodeReadinessPolicy

PolicyDocument = (
    CapacityPolicy
    | CostPolicy
    | EgressPolicy
    | ChangePolicy
    | PriorityPolicy
    | Ownership
    | NamespaceBlueprint
    | ImagePolicy
    | NodeReadinessPolicy  # read by the Cluster Operator: when a node may serve
    | PatchPolicy  # read by the Cluster Operator: what kernel and OS image nodes must run
)

# The last four are read by one agent: the Platform agent two (blueprints, audits), the
# Cluster Operator the last two (node readiness, patch levels); of them, the ImagePolicy also
# judges actions.
MODELS: dict[str, type[PolicyDocument]] = {
    model.model_fields["kind"].default: model
    for model in (
        CapacityPolicy,
        CostPolicy,
        EgressPolicy,
        ChangePolicy,
        PriorityPolicy,
        Ownership,
        NamespaceBlueprint,
        ImagePolicy,
        NodeReadinessPolicy,
        PatchPolicy,
    )
}
KINDS = tuple(MODELS)

# The concern each kind speaks for when it objects or supports; ChangePolicy findings are gates.
CONCERN_OF: dict[str, Concern] = {
    "CapacityPolicy": "reliability",
    "CostPolicy": "cost",
    "EgressPolicy": "security",
}

__all__ = [
    "API_VERSION",
    "CONCERN_OF",
    "KINDS",
    "MODELS",
    "CapacityPolicy",
    "ChangePolicy",
    "CostPolicy",
    "EgressPolicy",
    "ImagePolicy",
    "NamespaceBlueprint",
    "NodeReadinessPolicy",
    "Ownership",
    "PatchPolicy",
    "PolicyDocument",
    "PriorityPolicy",
]
