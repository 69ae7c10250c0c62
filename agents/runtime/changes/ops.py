"""The vocabulary of changes: typed, validated operations on one object each.

A `Change` names its target (`Object`), its parameters, the write tool call that makes it
(`write()`), the `propose` arguments the policy store judges it by (`proposal()`), the field
edits that make it in a manifest when git defines the object (`edits()`, empty when the
change has no manifest form), what validation fits it (`check`), and whether it is
destructive (asked back before it is carried out, whoever asked).

Every change, whoever plans it (a person's words read by a grammar, a model's proposal, a
playbook), is carried out by `agents.runtime.changes.carry` one way: policy, dry run, pull
request or gated write, validation, rollback, audit.

Must not know: any agent, any grammar, the servers' internals (only their tools' names).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from core import quantity

Check = Literal["rollout", "replicas", "fields", "node", "gone"]
ROLLED = frozenset({"Deployment", "StatefulSet", "DaemonSet"})
_DNS = r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$"
_ENV = r"^[A-Za-z_][A-Za-z0-9_.-]*$"
_LABEL_KEY = r"^([a-z0-9.-]+/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"


class Object(BaseModel):
    """What a change is made to: a workload, a pod or a node (namespace "" for a node)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: Literal["Deployment", "StatefulSet", "DaemonSet", "Pod", "Node", "Job"]
    name: str = Field(pattern=_DNS, max_length=253)
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


class _Change(BaseModel, ABC):
    """What every change says of itself; each kind below fills in `describe` and `write`."""

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

    def edits(self, live: dict[str, Any]) -> list[dict[str, Any]]:
        """The manifest field edits that make this change, given the live object's fields
        (`carry` reads `spec.template.spec.containers` among them); [] when it has none."""
        return []

    def proposal(self, live: dict[str, Any]) -> dict[str, Any]:
        """The `propose` arguments (the action the policy store judges), given the live object."""
        return {"action": self.action, "target": self.target.action_target,
                "namespace": self.target.namespace}  # fmt: skip

    def _named(self) -> dict[str, Any]:
        return {"name": self.target.name, "namespace": self.target.namespace}

    def _kind(self) -> dict[str, Any]:
        return {**self._named(), "kind": self.target.kind.lower()}


class Scale(_Change):
    op: Literal["scale"] = "scale"
    replicas: int = Field(ge=0, le=10_000)
    check: Check = "replicas"
    action: str = "scale"

    @property
    def destructive(self) -> bool:
        return self.replicas == 0

    def describe(self) -> str:
        return f"scale {self.target} to {self.replicas} replica{'s' * (self.replicas != 1)}"

    def write(self) -> tuple[str, dict[str, Any]]:
        return "scale", {**self._kind(), "replicas": self.replicas}

    def edits(self, live: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"path": "spec.replicas", "value": self.replicas}]

    def proposal(self, live: dict[str, Any]) -> dict[str, Any]:
        current = live.get("spec.replicas")
        before = {"from_replicas": current} if isinstance(current, int) else {}
        return {**super().proposal(live), "replicas": self.replicas, **before}


class SetImage(_Change):
    op: Literal["set_image"] = "set_image"
    container: str = Field(pattern=_DNS)
    image: str = Field(min_length=1, max_length=512, pattern=r"^[^\s]+$")

    def describe(self) -> str:
        return f"set the image of container {self.container} of {self.target} to {self.image}"

    def write(self) -> tuple[str, dict[str, Any]]:
        return "set_image", {**self._kind(), "container": self.container, "image": self.image}

    def edits(self, live: dict[str, Any]) -> list[dict[str, Any]]:
        path = f"spec.template.spec.containers[name={self.container}].image"
        return [{"path": path, "value": self.image}]


class Restart(_Change):
    op: Literal["restart"] = "restart"
    action: str = "restart"

    def describe(self) -> str:
        return f"restart the pods of {self.target} (a rolling restart)"

    def write(self) -> tuple[str, dict[str, Any]]:
        return "rollout_restart", self._kind()


class Undo(_Change):
    op: Literal["undo"] = "undo"
    revision: int = Field(default=0, ge=0)  # 0: the previous one
    action: str = "rollback"

    def describe(self) -> str:
        to = f"revision {self.revision}" if self.revision else "its previous revision"
        return f"roll {self.target} back to {to}"

    def write(self) -> tuple[str, dict[str, Any]]:
        return "rollout_undo", {**self._named(), "to_revision": self.revision}


class Pause(_Change):
    op: Literal["pause"] = "pause"
    paused: bool = True
    check: Check = "fields"

    def describe(self) -> str:
        return f"{'pause' if self.paused else 'resume'} the rollout of {self.target}"

    def write(self) -> tuple[str, dict[str, Any]]:
        patch = {"spec": {"paused": self.paused}}
        return "patch", {**self._kind(), "patch": patch, "patch_type": "merge"}

    def expected(self) -> dict[str, Any]:
        return {"spec.paused": self.paused}


class SetEnv(_Change):
    """Set (value not None) or remove (None) environment variables of one container."""

    op: Literal["set_env"] = "set_env"
    container: str = Field(pattern=_DNS)
    env: dict[Annotated[str, Field(pattern=_ENV)], str | None] = Field(min_length=1)

    def describe(self) -> str:
        said = ", ".join(
            f"remove {k}" if v is None else f"{k}={v}" for k, v in sorted(self.env.items())
        )
        return f"set the environment of container {self.container} of {self.target}: {said}"

    def write(self) -> tuple[str, dict[str, Any]]:
        ops: list[dict[str, Any]] = []
        for key, value in sorted(self.env.items()):
            if value is None:
                ops.append({"name": key, "$patch": "delete"})
            else:
                ops.append({"name": key, "value": value})
        container = {"name": self.container, "env": ops}
        patch = {"spec": {"template": {"spec": {"containers": [container]}}}}
        return "patch", {**self._kind(), "patch": patch, "patch_type": "strategic"}

    def edits(self, live: dict[str, Any]) -> list[dict[str, Any]]:
        """The container's whole env list as it will be: a variable that is not there yet has
        no list item to edit."""
        containers = live.get("spec.template.spec.containers") or []
        mine: dict[str, Any] = next((c for c in containers if c.get("name") == self.container), {})
        removed = {k for k, v in self.env.items() if v is None}
        env = [dict(e) for e in mine.get("env") or [] if e.get("name") not in removed]
        for entry in env:
            if entry["name"] in self.env:
                entry.pop("valueFrom", None)
                entry["value"] = self.env[entry["name"]]
        known = {e["name"] for e in env}
        env += [{"name": k, "value": v} for k, v in sorted(self.env.items())
                if v is not None and k not in known]  # fmt: skip
        path = f"spec.template.spec.containers[name={self.container}].env"
        return [{"path": path, "value": env} if env else {"path": path, "delete": True}]


class SetResources(_Change):
    """Requests and limits of one container; a field left "" stays as it is."""

    op: Literal["set_resources"] = "set_resources"
    container: str = Field(pattern=_DNS)
    cpu: str = ""
    memory: str = ""
    limit_cpu: str = ""
    limit_memory: str = ""
    action: str = "resize"

    @field_validator("cpu", "memory", "limit_cpu", "limit_memory")
    @classmethod
    def _quantity(cls, value: str) -> str:
        if value and quantity.parse(value) is None:
            raise ValueError(f"{value!r} is not a Kubernetes quantity (e.g. 250m, 0.5, 512Mi)")
        return value

    def describe(self) -> str:
        said = [
            f"{what} {value}"
            for what, value in (
                ("CPU request", self.cpu),
                ("memory request", self.memory),
                ("CPU limit", self.limit_cpu),
                ("memory limit", self.limit_memory),
            )
            if value
        ]
        return f"set {', '.join(said)} on container {self.container} of {self.target}"

    def write(self) -> tuple[str, dict[str, Any]]:
        given = {k: v for k, v in self._fields().items() if v}
        return "set_resources", {**self._kind(), "container": self.container, **given}

    def edits(self, live: dict[str, Any]) -> list[dict[str, Any]]:
        base = f"spec.template.spec.containers[name={self.container}].resources"
        where = {"cpu": "requests.cpu", "memory": "requests.memory",
                 "limit_cpu": "limits.cpu", "limit_memory": "limits.memory"}  # fmt: skip
        return [{"path": f"{base}.{where[k]}", "value": v} for k, v in self._fields().items() if v]

    def proposal(self, live: dict[str, Any]) -> dict[str, Any]:
        if not (self.cpu or self.memory):  # limits alone: the store judges it as a patch
            return {**super().proposal(live), "action": "patch"}
        asked = {"container": self.container}
        asked |= {k: v for k, v in (("cpu", self.cpu), ("memory", self.memory)) if v}
        return {**super().proposal(live), "resources": [asked]}

    def _fields(self) -> dict[str, str]:
        return {"cpu": self.cpu, "memory": self.memory, "limit_cpu": self.limit_cpu,
                "limit_memory": self.limit_memory}  # fmt: skip


class SetLabels(_Change):
    """Labels or annotations of the object itself: set (a value) or remove (None)."""

    op: Literal["set_labels"] = "set_labels"
    field: Literal["labels", "annotations"] = "labels"
    values: dict[Annotated[str, Field(pattern=_LABEL_KEY)], str | None] = Field(min_length=1)
    check: Check = "fields"

    def describe(self) -> str:
        said = ", ".join(
            f"remove {k}" if v is None else f"{k}={v}" for k, v in sorted(self.values.items())
        )
        return f"set the {self.field} of {self.target}: {said}"

    def write(self) -> tuple[str, dict[str, Any]]:
        patch = {"metadata": {self.field: dict(self.values)}}
        return "patch", {**self._kind(), "patch": patch, "patch_type": "merge"}

    def edits(self, live: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            {"path": f"metadata.{self.field}.{k}", "delete": True}
            if v is None
            else {"path": f"metadata.{self.field}.{k}", "value": v}
            for k, v in sorted(self.values.items())
        ]

    def expected(self) -> dict[str, Any]:
        return {f"metadata.{self.field}": dict(self.values)}


class Cordon(_Change):
    op: Literal["cordon"] = "cordon"
    unschedulable: bool = True
    check: Check = "node"

    @property
    def action_name(self) -> str:
        return "cordon" if self.unschedulable else "uncordon"

    def describe(self) -> str:
        return f"{self.action_name} {self.target}"

    def write(self) -> tuple[str, dict[str, Any]]:
        return self.action_name, {"node": self.target.name}

    def proposal(self, live: dict[str, Any]) -> dict[str, Any]:
        return {**super().proposal(live), "action": self.action_name, "namespace": ""}


class Delete(_Change):
    op: Literal["delete"] = "delete"
    check: Check = "gone"
    action: str = "delete"

    @property
    def destructive(self) -> bool:
        return True

    def describe(self) -> str:
        return f"delete {self.target}"

    def write(self) -> tuple[str, dict[str, Any]]:
        return "delete", self._kind()


Change = Annotated[
    Scale | SetImage | Restart | Undo | Pause | SetEnv | SetResources | SetLabels | Cordon | Delete,
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
