"""What every kind of change says of itself: its target, how it is written, judged, validated.

A change names its target (`Object`), the write tool call that makes it (`write()`), the
`propose` arguments the policy store judges it by (`proposal()`), the field edits that make it
in a manifest when git defines the object (`edits()`, empty when it has no manifest form), the
validation that fits it (`check`), and whether it is destructive (asked back first, whoever
asked).

Must not know: any agent, any grammar, the servers' internals (only their tools' names).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

# How a change is validated once it landed (agents.runtime.changes.carry):
# rollout   the workload's rollout completes, soaks and diagnoses clean
# replicas  exactly the replicas asked for, all available
# fields    the fields the change wrote, read back (`expected()`)
# node      the node's schedulability read back
# gone      the object is gone (or going)
# exists    the object the change made is there, as written (`expected()` when it says more)
# endpoints a Service routes to ready pods
# ready     a new workload's pods are up: replicas available, a pod Ready, a Job started
# drained   the node is cordoned and runs nothing a drain moves
Check = Literal[
    "rollout", "replicas", "fields", "node", "gone", "exists", "endpoints", "ready", "drained"
]
ROLLED = frozenset({"Deployment", "StatefulSet", "DaemonSet"})
POOLS = frozenset({"MachineDeployment"})  # node pools (Cluster API): replicas are machines
DNS = r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$"
ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_.-]*$"
LABEL_KEY = r"^([a-z0-9.-]+/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
Kind = Literal[
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "Pod",
    "Node",
    "Job",
    "CronJob",
    "Service",
    "ConfigMap",
    "Secret",
    "PersistentVolumeClaim",
    "Namespace",
    "NetworkPolicy",
    "Ingress",
    "PodDisruptionBudget",
    "HorizontalPodAutoscaler",
    "ResourceQuota",
    "LimitRange",
    "Role",
    "RoleBinding",
    "ServiceAccount",
    "MachineDeployment",
]
CLUSTER_SCOPED = frozenset({"Node", "Namespace"})


class Object(BaseModel):
    """What a change is made to (namespace "" for a node or a namespace)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: Kind
    name: str = Field(pattern=DNS, max_length=253)
    namespace: str = ""

    def __str__(self) -> str:
        where = f" in {self.namespace}" if self.namespace else ""
        return f"{self.kind} {self.name}{where}"

    @property
    def ref(self) -> dict[str, str]:
        return {"kind": self.kind, "name": self.name, "namespace": self.namespace}

    @property
    def action_target(self) -> str:
        return f"{self.kind.lower()}/{self.name}"


class Change(BaseModel, ABC):
    """What every change says of itself; each kind fills in `describe` and `write`."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    target: Object

    check: Check = "rollout"
    action: str = "patch"  # the policy store's action type

    @property
    def destructive(self) -> bool:
        return False

    @abstractmethod
    def describe(self) -> str:
        """The change in a person's words: "scale Deployment web in shop to 3 replicas"."""

    @abstractmethod
    def write(self) -> tuple[str, dict[str, Any]]:
        """The kube server's write tool that makes it, and the tool's arguments."""

    @property
    def tool(self) -> str:
        return self.write()[0]

    @property
    def carries_proposal(self) -> bool:
        """Whether the write carries the approved proposal to the kube server's gate; False
        when the gate judges the call by the policies themselves (a call the gate reads as
        more than the one action the proposal approved)."""
        return True

    def edits(self, live: dict[str, Any]) -> list[dict[str, Any]]:
        """The manifest field edits that make this change, given the live object's fields
        (`carry` reads `spec.template.spec.containers` among them); [] when it has none."""
        return []

    def expected(self) -> dict[str, Any]:
        """Fields the change wrote, by dotted path, as validation reads them back."""
        return {}

    def proposal(self, live: dict[str, Any]) -> dict[str, Any]:
        """The `propose` arguments (the action the policy store judges), given the live object."""
        return {
            "action": self.action,
            "target": self.target.action_target,
            "namespace": self.target.namespace,
        }

    def _named(self) -> dict[str, Any]:
        return {"name": self.target.name, "namespace": self.target.namespace}

    def _kind(self) -> dict[str, Any]:
        return {**self._named(), "kind": self.target.kind.lower()}


class Manifested(Change):
    """A change written as objects applied server-side (a new Service, a policy, a quota): the
    objects are `manifests()`; the first one is the target. Undone by deleting what it made,
    or by applying back what was there before."""

    check: Check = "exists"
    action: str = "apply"

    @abstractmethod
    def manifests(self) -> list[dict[str, Any]]:
        """The objects to apply, the target first, each a full manifest."""

    @property
    def carries_proposal(self) -> bool:
        """A proposal approves one action: a write of several objects is judged by the gate
        against the policies themselves, object by object."""
        return len(self.manifests()) == 1

    def write(self) -> tuple[str, dict[str, Any]]:
        text = yaml.safe_dump_all(self.manifests(), sort_keys=False)
        where = {"namespace": self.target.namespace} if self.target.namespace else {}
        return "apply", {"manifest": text, **where}

    def expected(self) -> dict[str, Any]:
        first = self.manifests()[0]
        return {key: first[key] for key in ("spec", "data") if key in first}

    def metadata(self, **labels: str) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": self.target.name}
        if self.target.namespace:
            meta["namespace"] = self.target.namespace
        meta["labels"] = {"app.kubernetes.io/managed-by": "kubecrew", **labels}
        return meta
