"""The action under evaluation and everything known about it: the typed input of a dry run.

An `Action` is what an agent or a person proposes (scale Deployment shop/web from 5 to 1, by
patch; resize its container web's CPU request from 500m to 100m). An `EvaluationRequest` adds
what the policies judge it by: the live target object, its metrics, the time, and the labels
of its namespace (for EgressPolicy's namespace classes).
`cel_input()` is the one place the documented CEL input (`core.policy.cel`) is built:
optional fields that are unknown are absent keys, so rules guard with has(), and metrics are
all doubles, so `metrics.x < 1` and `metrics.x * 2.0` both work. A resize's quantities stay
Kubernetes quantity strings in the action, and the CEL input adds each one's value in base units
(cores, bytes) as a double, `from_value` and `to_value`, since CEL cannot compare "100m" < "1".
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from core.errors import InvalidArgument
from core.policy.documents.blueprint import Quantity, quantity
from core.policy.documents.common import ActionType, DnsLabel

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
    "Ingress": ("ingress", "ingresses", "ing"),
    "PersistentVolumeClaim": ("persistentvolumeclaim", "persistentvolumeclaims", "pvc"),
    "ResourceQuota": ("resourcequota", "resourcequotas", "quota"),
    "LimitRange": ("limitrange", "limitranges", "limits"),
    "Role": ("role", "roles"),
    "RoleBinding": ("rolebinding", "rolebindings"),
    "Secret": ("secret", "secrets"),
    "ServiceAccount": ("serviceaccount", "serviceaccounts", "sa"),
    "MachineDeployment": ("machinedeployment", "machinedeployments", "md"),  # a node pool
    "Machine": ("machine", "machines", "ma"),
    "KubeadmControlPlane": ("kubeadmcontrolplane", "kubeadmcontrolplanes", "kcp"),
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
    # the kubeconfig context a fleet's action is for (None: the one cluster the crew looks
    # after); part of the target's identity, so an approval in one cluster carries nothing in
    # another
    cluster: str | None = None

    @model_serializer(mode="wrap")
    def _one_cluster_unsaid(self, dump: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A target of the one cluster dumps as it always has: no `cluster` key."""
        data: dict[str, Any] = dump(self)
        if self.cluster is None:
            data.pop("cluster", None)
        return data

    def __str__(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        there = f" in cluster {self.cluster}" if self.cluster else ""
        return f"{self.kind} {where}{self.name}{there}"


def parse_target(
    text: str, *, namespace: str | None = None, cluster: str | None = None
) -> TargetRef:
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
        return TargetRef(kind=kind, name=name, cluster=cluster)
    return TargetRef(kind=kind, name=name, namespace=namespace or "default", cluster=cluster)


class ReplicaChange(_Model):
    from_: Annotated[int, Field(ge=0)] | None = Field(
        default=None, validation_alias="from", serialization_alias="from"
    )
    to: Annotated[int, Field(ge=0)]


Resource = Literal["cpu", "memory"]


class QuantityChange(_Model):
    """One request or limit: from (the current value, when known) and to (asked)."""

    from_: Quantity | None = Field(
        default=None, validation_alias="from", serialization_alias="from"
    )
    to: Quantity

    def same_as(self, other: QuantityChange) -> bool:
        """The same target value, however written (`0.1` and `100m` are one quantity)."""
        return quantity(self.to) == quantity(other.to)


class ResourceChange(_Model):
    """A resize of one container: its requests (and limits) from -> to, per resource."""

    container: DnsLabel
    requests: dict[Resource, QuantityChange] = {}
    limits: dict[Resource, QuantityChange] = {}

    @model_validator(mode="after")
    def _something(self) -> ResourceChange:
        if not self.requests and not self.limits:
            raise InvalidArgument(
                f"the resize of container {self.container} changes nothing: give a cpu or "
                "memory request (to, and from when known)"
            )
        return self

    def describe(self) -> str:
        parts = [
            f"{kind}{name} {'?' if q.from_ is None else q.from_} -> {q.to}"
            for kind, amounts in (("", self.requests), ("limit ", self.limits))
            for name, q in sorted(amounts.items())
        ]
        return f"{self.container} {', '.join(parts)}"


class Action(_Model):
    type: ActionType
    target: TargetRef
    labels: dict[str, str] = {}  # the target's labels, when no live object is given
    replicas: ReplicaChange | None = None  # scale: from (current) and to (asked)
    # resize: per container; none is a dry run of the intent, not a change one can carry out
    resources: list[ResourceChange] | None = None
    pods: Annotated[int, Field(ge=0)] | None = None  # pods disrupted at once: evict, drain
    # images the target runs after the action and did not run before (ImagePolicy judges them)
    images: list[str] | None = None
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
        if self.resources:
            text += " " + "; ".join(change.describe() for change in self.resources)
        if self.pods is not None:
            text += f" ({self.pods} pods)"
        if self.images:
            text += " with image " + ", ".join(self.images)
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
        """The target's labels: the live object's when there is one (what the cluster says wins
        over what a caller claims), else those the action names."""
        if self.target is None:
            return dict(self.action.labels)
        live = (self.target.get("metadata") or {}).get("labels")
        return dict(live) if isinstance(live, dict) else {}

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
        if self.action.resources is not None:
            action["resources"] = [_valued(change) for change in self.action.resources]
        return {
            "action": action,
            "target": self.target or {},
            "metrics": {name: float(value) for name, value in self.metrics.items()},
            "now": self.now,
        }


def _valued(change: ResourceChange) -> dict[str, object]:
    """A resource change for CEL: each quantity with its value in cores or bytes beside it."""
    out: dict[str, object] = {"container": change.container}
    for field in ("requests", "limits"):
        amounts: dict[str, QuantityChange] = getattr(change, field)
        out[field] = {name: _values(q) for name, q in amounts.items()}
    return out


def _values(change: QuantityChange) -> dict[str, object]:
    out: dict[str, object] = {"to": change.to, "to_value": float(quantity(change.to))}
    if change.from_ is not None:
        out |= {"from": change.from_, "from_value": float(quantity(change.from_))}
    return out
