"""The action under evaluation and everything known about it: the typed input of a dry run.

An `Action` is what an agent or a person proposes (scale Deployment shop/web from 5 to 1, by
patch). An `EvaluationRequest` adds what the policies judge it by: the live target object, its
metrics, the time, and the labels of its namespace (for EgressPolicy's namespace classes).
`cel_input()` is the one place the documented CEL input (`mcp_servers.policy.cel`) is built:
optional fields that are unknown are absent keys, so rules guard with has(), and metrics are
all doubles, so `metrics.x < 1` and `metrics.x * 2.0` both work.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from mcp_servers.common.errors import InvalidArgument
from mcp_servers.policy.documents.common import ActionType

# The Kubernetes API verb each action mostly uses (`action.verb` in CEL), as RBAC names them.
VERBS: dict[str, str] = {
    "scale": "patch",
    "patch": "patch",
    "apply": "patch",
    "delete": "delete",
    "drain": "create",  # evictions
    "cordon": "patch",
    "uncordon": "patch",
    "evict": "create",
    "restart": "patch",
    "rollback": "patch",
    "resize": "patch",
}
_KINDS = {
    "Deployment": ("deployment", "deployments", "deploy"),
    "StatefulSet": ("statefulset", "statefulsets", "sts"),
    "DaemonSet": ("daemonset", "daemonsets", "ds"),
    "ReplicaSet": ("replicaset", "replicasets", "rs"),
    "Pod": ("pod", "pods", "po"),
    "Node": ("node", "nodes", "no"),
    "Namespace": ("namespace", "namespaces", "ns"),
    "Service": ("service", "services", "svc"),
    "NetworkPolicy": ("networkpolicy", "networkpolicies", "netpol"),
    "Job": ("job", "jobs"),
    "CronJob": ("cronjob", "cronjobs", "cj"),
    "ConfigMap": ("configmap", "configmaps", "cm"),
    "HorizontalPodAutoscaler": ("horizontalpodautoscaler", "horizontalpodautoscalers", "hpa"),
    "PodDisruptionBudget": ("poddisruptionbudget", "poddisruptionbudgets", "pdb"),
}
_KIND_OF = {alias: kind for kind, aliases in _KINDS.items() for alias in (*aliases, kind.lower())}
CLUSTER_SCOPED = frozenset({"Node", "Namespace"})


class _Model(BaseModel):
    model_config = ConfigDict(
        extra="forbid", frozen=True, validate_by_name=True, serialize_by_alias=True
    )


class TargetRef(_Model):
    kind: str
    name: str
    namespace: str | None = None

    def __str__(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {where}{self.name}"


def parse_target(text: str, *, namespace: str | None = None) -> TargetRef:
    """`deployment/web` or `deploy/web` or `Node/worker-1` -> a TargetRef, as kubectl reads them."""
    resource, slash, name = text.partition("/")
    kind = _KIND_OF.get(resource.lower())
    if not slash or not name or kind is None:
        known = ", ".join(sorted(k.lower() for k in _KINDS))
        raise InvalidArgument(
            f"target {text!r} is not KIND/NAME with a known kind (such as deployment/web); "
            f"kinds: {known}"
        )
    if kind in CLUSTER_SCOPED:
        return TargetRef(kind=kind, name=name)
    return TargetRef(kind=kind, name=name, namespace=namespace or "default")


class ReplicaChange(_Model):
    from_: Annotated[int, Field(ge=0)] | None = Field(
        default=None, validation_alias="from", serialization_alias="from"
    )
    to: Annotated[int, Field(ge=0)]


class Action(_Model):
    type: ActionType
    target: TargetRef
    labels: dict[str, str] = {}  # the target's labels, when no live object is given
    replicas: ReplicaChange | None = None  # scale: from (current) and to (asked)
    pods: Annotated[int, Field(ge=0)] | None = None  # pods disrupted at once: evict, drain
    via: Literal["direct", "pull-request"] = "direct"  # an API call, or a pull request
    actor: str | None = None  # the identity proposing it

    @model_validator(mode="after")
    def _replicas_for_scale(self) -> Action:
        if self.type == "scale" and self.replicas is None:
            raise InvalidArgument("a scale action needs replicas (to, and from when known)")
        return self

    @property
    def verb(self) -> str:
        return VERBS[self.type]

    def describe(self) -> str:
        text = f"{self.type} {self.target}"
        if self.replicas is not None:
            start = "?" if self.replicas.from_ is None else str(self.replicas.from_)
            text += f" {start} -> {self.replicas.to} replicas"
        if self.pods is not None:
            text += f" ({self.pods} pods)"
        return text + (" directly" if self.via == "direct" else " via a pull request")


class EvaluationRequest(_Model):
    action: Action
    target: dict[str, Any] | None = None  # the live object
    metrics: dict[str, float] = {}
    now: datetime
    namespace_labels: dict[str, str] = {}

    @field_validator("now")
    @classmethod
    def _aware(cls, now: datetime) -> datetime:
        if now.tzinfo is None:
            raise InvalidArgument("now needs a time zone (an ISO time with Z or +01:00)")
        return now

    def labels(self) -> dict[str, str]:
        """The target's labels: the live object's, overridden by those the action names."""
        live = ((self.target or {}).get("metadata") or {}).get("labels") or {}
        return {**live, **self.action.labels}

    def namespace_class(self) -> dict[str, str]:
        """The namespace's labels, with the name label Kubernetes sets on every namespace."""
        namespace = self.action.target.namespace
        named = {"kubernetes.io/metadata.name": namespace} if namespace else {}
        return {**self.namespace_labels, **named}

    def completed(self) -> EvaluationRequest:
        """This request with `replicas.from` taken from the live object when not given."""
        replicas = self.action.replicas
        current = ((self.target or {}).get("spec") or {}).get("replicas")
        if replicas is None or replicas.from_ is not None or not isinstance(current, int):
            return self
        filled = ReplicaChange(from_=current, to=replicas.to)
        return self.model_copy(
            update={"action": self.action.model_copy(update={"replicas": filled})}
        )

    def cel_input(self) -> dict[str, object]:
        action = self.action.model_dump(exclude_none=True)
        action["verb"] = self.action.verb
        action["labels"] = self.labels()
        return {
            "action": action,
            "target": self.target or {},
            "metrics": {name: float(value) for name, value in self.metrics.items()},
            "now": self.now,
        }
