"""Changes of a workload that exists, and of its pod template: replicas, images, restarts and
rollbacks, pausing, environment, requests and limits, labels, probes, where its pods may run,
how they spread, what they mount, the size of a claim, and deletes.

Must not know: any agent, any grammar, the servers' internals (only their tools' names).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from agents.runtime.changes.kinds.base import (
    CLUSTER_SCOPED,
    DNS,
    ENV_NAME,
    LABEL_KEY,
    Change,
    Check,
)
from core import quantity


class Scale(Change):
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


class SetImage(Change):
    op: Literal["set_image"] = "set_image"
    container: str = Field(pattern=DNS)
    image: str = Field(min_length=1, max_length=512, pattern=r"^[^\s]+$")

    def describe(self) -> str:
        return f"set the image of container {self.container} of {self.target} to {self.image}"

    def write(self) -> tuple[str, dict[str, Any]]:
        return "set_image", {**self._kind(), "container": self.container, "image": self.image}

    def edits(self, live: dict[str, Any]) -> list[dict[str, Any]]:
        path = f"spec.template.spec.containers[name={self.container}].image"
        return [{"path": path, "value": self.image}]


class Restart(Change):
    op: Literal["restart"] = "restart"
    action: str = "restart"

    def describe(self) -> str:
        return f"restart the pods of {self.target} (a rolling restart)"

    def write(self) -> tuple[str, dict[str, Any]]:
        return "rollout_restart", self._kind()


class Undo(Change):
    op: Literal["undo"] = "undo"
    revision: int = Field(default=0, ge=0)  # 0: the previous one
    action: str = "rollback"

    def describe(self) -> str:
        to = f"revision {self.revision}" if self.revision else "its previous revision"
        return f"roll {self.target} back to {to}"

    def write(self) -> tuple[str, dict[str, Any]]:
        return "rollout_undo", {**self._named(), "to_revision": self.revision}


class Pause(Change):
    op: Literal["pause"] = "pause"
    paused: bool = True
    check: Check = "fields"

    def describe(self) -> str:
        what = "schedule" if self.target.kind == "CronJob" else "rollout"
        return f"{'pause' if self.paused else 'resume'} the {what} of {self.target}"

    def write(self) -> tuple[str, dict[str, Any]]:
        patch = {"spec": {self._field: self.paused}}
        return "patch", {**self._kind(), "patch": patch, "patch_type": "merge"}

    def edits(self, live: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"path": f"spec.{self._field}", "value": self.paused}]

    def expected(self) -> dict[str, Any]:
        return {f"spec.{self._field}": self.paused}

    @property
    def _field(self) -> str:
        return "suspend" if self.target.kind == "CronJob" else "paused"


class SetEnv(Change):
    """Set (value not None) or remove (None) environment variables of one container."""

    op: Literal["set_env"] = "set_env"
    container: str = Field(pattern=DNS)
    env: dict[Annotated[str, Field(pattern=ENV_NAME)], str | None] = Field(min_length=1)

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
        env += [
            {"name": k, "value": v}
            for k, v in sorted(self.env.items())
            if v is not None and k not in known
        ]
        path = f"spec.template.spec.containers[name={self.container}].env"
        return [{"path": path, "value": env} if env else {"path": path, "delete": True}]


class SetResources(Change):
    """Requests and limits of one container; a field left "" stays as it is."""

    op: Literal["set_resources"] = "set_resources"
    container: str = Field(pattern=DNS)
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
        where = {
            "cpu": "requests.cpu",
            "memory": "requests.memory",
            "limit_cpu": "limits.cpu",
            "limit_memory": "limits.memory",
        }
        return [{"path": f"{base}.{where[k]}", "value": v} for k, v in self._fields().items() if v]

    @property
    def carries_proposal(self) -> bool:
        return bool(self.cpu or self.memory)  # a limit is not part of a resize proposal's values

    def proposal(self, live: dict[str, Any]) -> dict[str, Any]:
        if not (self.cpu or self.memory):  # limits alone: the store judges it as a patch
            return {**super().proposal(live), "action": "patch"}
        asked = {"container": self.container}
        asked |= {k: v for k, v in (("cpu", self.cpu), ("memory", self.memory)) if v}
        return {**super().proposal(live), "resources": [asked]}

    def _fields(self) -> dict[str, str]:
        return {
            "cpu": self.cpu,
            "memory": self.memory,
            "limit_cpu": self.limit_cpu,
            "limit_memory": self.limit_memory,
        }


class SetLabels(Change):
    """Labels or annotations of the object itself: set (a value) or remove (None)."""

    op: Literal["set_labels"] = "set_labels"
    field: Literal["labels", "annotations"] = "labels"
    values: dict[Annotated[str, Field(pattern=LABEL_KEY)], str | None] = Field(min_length=1)
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


class Delete(Change):
    """Delete one object by name; a namespace or another cluster-scoped object is confirmed by
    its kind and name, as the kube server's `delete` asks."""

    op: Literal["delete"] = "delete"
    check: Check = "gone"
    action: str = "delete"

    @property
    def destructive(self) -> bool:
        return True

    def describe(self) -> str:
        return f"delete {self.target}"

    def write(self) -> tuple[str, dict[str, Any]]:
        arguments = self._kind()
        if self.target.kind in CLUSTER_SCOPED:
            arguments |= {
                "namespace": None,
                "confirm": f"{self.target.kind.lower()}/{self.target.name}",
            }
        return "delete", arguments


class ResizeClaim(Change):
    """A claim's requested storage, grown (Kubernetes never shrinks one): the class must allow
    expansion; validation waits for the capacity the volume reports."""

    op: Literal["resize_claim"] = "resize_claim"
    size: str
    check: Check = "fields"
    action: str = "patch"

    @field_validator("size")
    @classmethod
    def _quantity(cls, value: str) -> str:
        if quantity.parse(value) is None:
            raise ValueError(f"{value!r} is not a storage size (e.g. 15Gi)")
        return value

    def describe(self) -> str:
        return f"resize {self.target} to {self.size}"

    def write(self) -> tuple[str, dict[str, Any]]:
        patch = {"spec": {"resources": {"requests": {"storage": self.size}}}}
        return "patch", {**self._kind(), "patch": patch, "patch_type": "merge"}

    def edits(self, live: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"path": "spec.resources.requests.storage", "value": self.size}]

    def expected(self) -> dict[str, Any]:
        return {"spec.resources.requests.storage": self.size, "status.capacity.storage": self.size}
