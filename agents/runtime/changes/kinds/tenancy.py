"""Changes of a namespace's frame (the Platform's): a new namespace, its quota, its default
container limits, its pod security level, and who may do what in it (RBAC).

Must not know: any agent, any grammar, the servers' internals (only their tools' names).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agents.runtime.changes.kinds.base import Change, Check, Manifested
from core import quantity

Level = Literal["privileged", "baseline", "restricted"]
_QUOTA_KEY = r"^[a-z0-9./-]+$"


def _quantities(values: dict[str, str]) -> dict[str, str]:
    for key, value in values.items():
        if quantity.parse(value) is None:
            raise ValueError(f"{key}: {value!r} is not a Kubernetes quantity (e.g. 4, 8Gi, 10)")
    return values


class NewNamespace(Manifested):
    """A namespace, with labels, a pod security level and a quota when asked."""

    op: Literal["new_namespace"] = "new_namespace"
    labels: dict[str, str] = {}
    pod_security: Level | None = None
    quota: dict[Annotated[str, Field(pattern=_QUOTA_KEY)], str] = {}

    @field_validator("quota")
    @classmethod
    def _caps(cls, values: dict[str, str]) -> dict[str, str]:
        return _quantities(values)

    def describe(self) -> str:
        extra = []
        if self.quota:
            extra.append("quota " + ", ".join(f"{k}={v}" for k, v in sorted(self.quota.items())))
        if self.pod_security:
            extra.append(f"{self.pod_security} pod security")
        if self.labels:
            extra.append("labels " + ", ".join(f"{k}={v}" for k, v in sorted(self.labels.items())))
        return f"create namespace {self.target.name}" + (
            f" with {'; '.join(extra)}" if extra else ""
        )

    def manifests(self) -> list[dict[str, Any]]:
        labels = dict(self.labels)
        if self.pod_security:
            labels["pod-security.kubernetes.io/enforce"] = self.pod_security
        namespace = {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {
                "name": self.target.name,
                "labels": {"app.kubernetes.io/managed-by": "kubecrew", **labels},
            },
        }
        made: list[dict[str, Any]] = [namespace]
        if self.quota:
            made.append(
                {
                    "apiVersion": "v1",
                    "kind": "ResourceQuota",
                    "metadata": {"name": "quota", "namespace": self.target.name},
                    "spec": {"hard": dict(self.quota)},
                }
            )
        return made

    def write(self) -> tuple[str, dict[str, Any]]:
        tool, arguments = super().write()
        return tool, {k: v for k, v in arguments.items() if k != "namespace"}

    def expected(self) -> dict[str, Any]:
        return {"status.phase": "Active"}


class NewServiceAccount(Manifested):
    """An identity for a namespace's workloads; it may do nothing until access is granted to
    it ("let the service account ci-bot list pods in ci")."""

    op: Literal["new_serviceaccount"] = "new_serviceaccount"

    def describe(self) -> str:
        return f"create {self.target}"

    def manifests(self) -> list[dict[str, Any]]:
        return [{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": self.metadata()}]


class Quota(Manifested):
    """A ResourceQuota: hard caps on a namespace's requests, limits and object counts."""

    op: Literal["quota"] = "quota"
    hard: dict[Annotated[str, Field(pattern=_QUOTA_KEY)], str] = Field(min_length=1)

    @field_validator("hard")
    @classmethod
    def _caps(cls, values: dict[str, str]) -> dict[str, str]:
        return _quantities(values)

    def describe(self) -> str:
        caps = ", ".join(f"{k}={v}" for k, v in sorted(self.hard.items()))
        return f"cap namespace {self.target.namespace} at {caps} ({self.target})"

    def manifests(self) -> list[dict[str, Any]]:
        return [
            {
                "apiVersion": "v1",
                "kind": "ResourceQuota",
                "metadata": self.metadata(),
                "spec": {"hard": dict(self.hard)},
            }
        ]


Slot = Literal["default", "default_request", "max", "min"]
_SLOTS = {"default": "default", "default_request": "defaultRequest", "max": "max", "min": "min"}


class DefaultLimits(Manifested):
    """A LimitRange for containers: defaults for requests and limits, and bounds."""

    op: Literal["default_limits"] = "default_limits"
    limits: dict[Slot, dict[Literal["cpu", "memory"], str]] = Field(min_length=1)

    @field_validator("limits")
    @classmethod
    def _sizes(cls, values: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
        for each in values.values():
            _quantities(dict(each))
        return values

    def describe(self) -> str:
        said = "; ".join(
            f"{slot.replace('_', ' ')} " + ", ".join(f"{k} {v}" for k, v in sorted(amounts.items()))
            for slot, amounts in sorted(self.limits.items())
        )
        return f"give containers in {self.target.namespace} {said} ({self.target})"

    def manifests(self) -> list[dict[str, Any]]:
        item: dict[str, Any] = {"type": "Container"}
        for slot, amounts in self.limits.items():
            item[_SLOTS[slot]] = dict(amounts)
        return [
            {
                "apiVersion": "v1",
                "kind": "LimitRange",
                "metadata": self.metadata(),
                "spec": {"limits": [item]},
            }
        ]


class Subject(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: Literal["User", "Group", "ServiceAccount"]
    name: str = Field(min_length=1, max_length=253, pattern=r"^[A-Za-z0-9][-A-Za-z0-9.@:_]*$")
    namespace: str = ""  # a ServiceAccount's

    def spec(self) -> dict[str, Any]:
        if self.kind == "ServiceAccount":
            return {"kind": "ServiceAccount", "name": self.name, "namespace": self.namespace}
        return {"kind": self.kind, "name": self.name, "apiGroup": "rbac.authorization.k8s.io"}

    def __str__(self) -> str:
        where = f"{self.namespace}/" if self.kind == "ServiceAccount" and self.namespace else ""
        return f"{self.kind.lower()} {where}{self.name}"


class Rule(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    verbs: list[str] = Field(min_length=1)
    resources: list[str] = Field(min_length=1)
    api_groups: list[str] = [""]

    def spec(self) -> dict[str, Any]:
        return {
            "apiGroups": list(self.api_groups),
            "resources": list(self.resources),
            "verbs": list(self.verbs),
        }

    def __str__(self) -> str:
        return f"{','.join(self.verbs)} {','.join(self.resources)}"


class Grant(Manifested):
    """Access for a person, group or ServiceAccount in one namespace: a RoleBinding to a
    ClusterRole the cluster has (view, edit, admin) or to a Role made of exactly `rules`."""

    op: Literal["grant"] = "grant"
    subject: Subject
    role: Literal["view", "edit", "admin", ""] = ""
    rules: list[Rule] = []

    @model_validator(mode="after")
    def _one(self) -> Grant:
        if bool(self.role) == bool(self.rules):
            raise ValueError("give a role (view, edit or admin) or rules, one of them")
        return self

    @property
    def destructive(self) -> bool:
        return self.role == "admin" or any(
            "*" in r.verbs or "secrets" in r.resources for r in self.rules
        )

    def describe(self) -> str:
        what = f"the {self.role} role" if self.role else "; ".join(map(str, self.rules))
        return f"let {self.subject} {what} in {self.target.namespace} ({self.target})"

    def manifests(self) -> list[dict[str, Any]]:
        binding = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": self.metadata(),
            "subjects": [self.subject.spec()],
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole" if self.role else "Role",
                "name": self.role or self.target.name,
            },
        }
        if self.role:
            return [binding]
        role = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": self.metadata(),
            "rules": [r.spec() for r in self.rules],
        }
        return [role, binding]

    def expected(self) -> dict[str, Any]:
        return {}


class Revoke(Change):
    """A subject's access taken away: the subject removed from one RoleBinding (the binding
    deleted when it was the only subject)."""

    op: Literal["revoke"] = "revoke"
    subject: Subject
    remaining: list[Subject] = []  # the binding's other subjects, which keep their access
    check: Check = "fields"

    @property
    def destructive(self) -> bool:
        return True

    @property
    def _deletes(self) -> bool:
        return not self.remaining

    def describe(self) -> str:
        how = "delete" if self._deletes else "remove the subject from"
        return f"revoke the access of {self.subject}: {how} {self.target}"

    def write(self) -> tuple[str, dict[str, Any]]:
        if self._deletes:
            return "delete", self._kind()
        patch = {"subjects": [s.spec() for s in self.remaining]}
        return "patch", {**self._kind(), "patch": patch, "patch_type": "merge"}

    def proposal(self, live: dict[str, Any]) -> dict[str, Any]:
        return {**super().proposal(live), "action": "delete" if self._deletes else "patch"}

    def expected(self) -> dict[str, Any]:
        return {} if self._deletes else {"subjects": [s.spec() for s in self.remaining]}
