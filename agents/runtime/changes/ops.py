"""The vocabulary of changes: every kind of change, as one typed, validated union.

A change names its target, its parameters, the write tool call that makes it, the `propose`
arguments the policy store judges it by, its manifest edits when git defines the object, the
validation that fits it, and whether it is destructive (`kinds.base.Change`). The kinds live
by what they change: `kinds.workloads` (replicas, images, restarts, rollbacks, pausing, env,
requests and limits, labels, a claim's size, deletes), `kinds.templates` (probes, node
selector, tolerations, spread, mounts), `kinds.objects` (Services, network policies, Ingress
routes, disruption budgets, autoscalers, ConfigMaps, new workloads), `kinds.tenancy`
(namespaces, quotas, default limits, access) and `kinds.nodes` (cordon, drain, taints).

Every change, whoever plans it (a person's words read by a grammar, a model's proposal, a
playbook), is carried out by `agents.runtime.changes.carry` one way: policy, dry run, pull
request or gated write, validation, rollback, audit.

Must not know: any agent, any grammar, the servers' internals (only their tools' names).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from agents.runtime.changes.kinds.base import (
    CLUSTER_SCOPED,
    POOLS,
    ROLLED,
    Check,
    Manifested,
    Object,
)
from agents.runtime.changes.kinds.base import Change as Kind
from agents.runtime.changes.kinds.nodes import Cordon, Drain, Taint
from agents.runtime.changes.kinds.objects import (
    Autoscaler,
    Budget,
    ConfigData,
    Expose,
    NetworkRule,
    NewClaim,
    NewWorkload,
    Peer,
    Port,
    Resources,
    Retarget,
    Route,
)
from agents.runtime.changes.kinds.templates import (
    Mount,
    Probe,
    SetNodeSelector,
    SetProbes,
    SetTolerations,
    Spread,
    Toleration,
)
from agents.runtime.changes.kinds.tenancy import (
    DefaultLimits,
    Grant,
    NewNamespace,
    NewServiceAccount,
    Quota,
    Revoke,
    Rule,
    Subject,
)
from agents.runtime.changes.kinds.workloads import (
    Delete,
    Pause,
    ResizeClaim,
    Restart,
    Scale,
    SetEnv,
    SetImage,
    SetLabels,
    SetResources,
    Undo,
)

__all__ = [
    "CLUSTER_SCOPED", "POOLS", "ROLLED", "Autoscaler", "Budget", "Change", "ChangeRequest", "Check",
    "ConfigData", "Cordon", "DefaultLimits", "Delete", "Drain", "Expose", "Grant", "Kind",
    "Manifested", "Mount", "NetworkRule", "NewClaim", "NewNamespace", "NewServiceAccount",
    "NewWorkload", "Object", "Pause", "Peer", "Planned", "Port", "Probe", "Quota", "ResizeClaim",
    "Resources", "Restart", "Retarget", "Revoke", "Route", "Rule", "Scale", "SetEnv", "SetImage",
    "SetLabels", "SetNodeSelector", "SetProbes", "SetResources", "SetTolerations", "Spread",
    "Subject", "Taint", "Toleration", "Undo", "from_json",
]  # fmt: skip

Change = Annotated[
    Scale
    | SetImage
    | Restart
    | Undo
    | Pause
    | SetEnv
    | SetResources
    | SetLabels
    | Delete
    | ResizeClaim
    | SetProbes
    | SetNodeSelector
    | SetTolerations
    | Spread
    | Mount
    | Expose
    | Retarget
    | NetworkRule
    | Route
    | Budget
    | Autoscaler
    | ConfigData
    | NewClaim
    | NewWorkload
    | NewNamespace
    | NewServiceAccount
    | Quota
    | DefaultLimits
    | Grant
    | Revoke
    | Cordon
    | Drain
    | Taint,
    Field(discriminator="op"),
]


class Planned(BaseModel):
    """A change as it travels in a graph's state (plain JSON through the checkpointer)."""

    model_config = ConfigDict(frozen=True)
    change: Change


def from_json(data: dict[str, Any]) -> Change:
    return Planned.model_validate({"change": data}).change


class ChangeRequest(BaseModel):
    """The arguments of the model's `request_change` tool: one change from this vocabulary."""

    change: Change = Field(description="The change, e.g. {op: scale, target: {kind: "
                           "Deployment, name: web, namespace: shop}, replicas: 3}")  # fmt: skip
