"""Changes of a workload's pod template beyond its containers' values: probes, where its pods
may run (node selector, tolerations), how they spread over nodes or zones, and what they mount.

Each is one strategic-merge patch of the template, a rollout, validated by the rollout (the
pods Ready with the new template: a probe that passes, a node that matches).

Must not know: any agent, any grammar, the servers' internals (only their tools' names).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agents.runtime.changes.kinds.base import DNS, LABEL_KEY, Change

ProbeKind = Literal["liveness", "readiness", "startup"]
Effect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute", ""]


class _Template(Change):
    def _patch(self, spec: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        patch = {"spec": {"template": {"spec": spec}}}
        return "patch", {**self._kind(), "patch": patch, "patch_type": "strategic"}


class Probe(BaseModel):
    """One probe: an HTTP GET (path, port), a TCP connect (port) or a command, and its timing."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    handler: Literal["http", "tcp", "exec"]
    path: str = Field(default="/", pattern=r"^/[^\s]*$")
    port: int | str = 80
    scheme: Literal["HTTP", "HTTPS"] = "HTTP"
    command: list[str] = []
    initial_delay: int = Field(default=0, ge=0, le=3600)
    period: int = Field(default=10, ge=1, le=3600)
    timeout: int = Field(default=1, ge=1, le=3600)
    failure_threshold: int = Field(default=3, ge=1, le=100)

    @model_validator(mode="after")
    def _complete(self) -> Probe:
        if self.handler == "exec" and not self.command:
            raise ValueError("an exec probe needs a command")
        return self

    def spec(self) -> dict[str, Any]:
        action: dict[str, Any]
        if self.handler == "http":
            action = {"httpGet": {"path": self.path, "port": self.port, "scheme": self.scheme}}
        elif self.handler == "tcp":
            action = {"tcpSocket": {"port": self.port}}
        else:
            action = {"exec": {"command": list(self.command)}}
        timing = {
            "initialDelaySeconds": self.initial_delay,
            "periodSeconds": self.period,
            "timeoutSeconds": self.timeout,
            "failureThreshold": self.failure_threshold,
        }
        return {**action, **timing}

    def describe(self) -> str:
        if self.handler == "http":
            how = f"GET {self.path} on port {self.port}"
        elif self.handler == "tcp":
            how = f"a TCP connect to port {self.port}"
        else:
            how = f"`{' '.join(self.command)}`"
        delay = f", after {self.initial_delay}s" if self.initial_delay else ""
        return f"{how} every {self.period}s{delay}"


class SetProbes(_Template):
    """Add, change (None: remove) the liveness, readiness or startup probe of one container."""

    op: Literal["set_probes"] = "set_probes"
    container: str = Field(pattern=DNS)
    probes: dict[ProbeKind, Probe | None] = Field(min_length=1)

    def describe(self) -> str:
        said = "; ".join(
            f"remove its {kind} probe" if probe is None else f"{kind} probe {probe.describe()}"
            for kind, probe in sorted(self.probes.items())
        )
        return f"set probes of container {self.container} of {self.target}: {said}"

    def write(self) -> tuple[str, dict[str, Any]]:
        container: dict[str, Any] = {"name": self.container}
        for kind, probe in self.probes.items():
            container[f"{kind}Probe"] = None if probe is None else probe.spec()
        return self._patch({"containers": [container]})

    def edits(self, live: dict[str, Any]) -> list[dict[str, Any]]:
        base = f"spec.template.spec.containers[name={self.container}]"
        return [
            {"path": f"{base}.{kind}Probe", "delete": True}
            if probe is None
            else {"path": f"{base}.{kind}Probe", "value": probe.spec()}
            for kind, probe in sorted(self.probes.items())
        ]


class SetNodeSelector(_Template):
    """Where the pods may run: node labels they need (None removes a key; `clear` all)."""

    op: Literal["set_node_selector"] = "set_node_selector"
    values: dict[Annotated[str, Field(pattern=LABEL_KEY)], str | None] = {}
    clear: bool = False

    @model_validator(mode="after")
    def _something(self) -> SetNodeSelector:
        if not self.values and not self.clear:
            raise ValueError("give node labels to require, or clear=true to drop the selector")
        return self

    def describe(self) -> str:
        if self.clear:
            return f"remove the node selector of {self.target} (its pods may run on any node)"
        said = ", ".join(
            f"without {k}" if v is None else f"{k}={v}" for k, v in sorted(self.values.items())
        )
        return f"run the pods of {self.target} only on nodes with {said}"

    def write(self) -> tuple[str, dict[str, Any]]:
        return self._patch({"nodeSelector": None if self.clear else dict(self.values)})

    def edits(self, live: dict[str, Any]) -> list[dict[str, Any]]:
        if self.clear:
            return [{"path": "spec.template.spec.nodeSelector", "delete": True}]
        return [
            {"path": f"spec.template.spec.nodeSelector.{k}", "delete": True}
            if v is None
            else {"path": f"spec.template.spec.nodeSelector.{k}", "value": v}
            for k, v in sorted(self.values.items())
        ]


class Toleration(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    key: str = Field(pattern=LABEL_KEY)
    value: str = ""
    effect: Effect = ""

    def spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {"key": self.key}
        spec |= {"operator": "Equal", "value": self.value} if self.value else {"operator": "Exists"}
        if self.effect:
            spec["effect"] = self.effect
        return spec

    def __str__(self) -> str:
        value = f"={self.value}" if self.value else ""
        return f"{self.key}{value}:{self.effect or '*'}"


class SetTolerations(_Template):
    """The taints its pods tolerate, as the whole list after the change (a list Kubernetes
    replaces whole); `added` and `removed` say what changed."""

    op: Literal["set_tolerations"] = "set_tolerations"
    tolerations: list[Toleration]
    added: list[Toleration] = []
    removed: list[str] = []  # taint keys no longer tolerated

    def describe(self) -> str:
        said = [f"tolerate {t}" for t in self.added] + [
            f"stop tolerating {k}" for k in self.removed
        ]
        return f"let the pods of {self.target} {', '.join(said) or 'keep their tolerations'}"

    def write(self) -> tuple[str, dict[str, Any]]:
        return "patch", {
            **self._kind(),
            "patch_type": "merge",
            "patch": {
                "spec": {
                    "template": {"spec": {"tolerations": [t.spec() for t in self.tolerations]}}
                }
            },
        }

    def edits(self, live: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            {
                "path": "spec.template.spec.tolerations",
                "value": [t.spec() for t in self.tolerations],
            }
        ]


class Spread(_Template):
    """Pods spread over nodes or zones: a topology spread constraint on the pods' labels."""

    op: Literal["spread"] = "spread"
    topology: str = Field(default="kubernetes.io/hostname", pattern=LABEL_KEY)
    max_skew: int = Field(default=1, ge=1, le=100)
    hard: bool = False  # DoNotSchedule: a pod stays Pending rather than skew more
    selector: dict[str, str] = Field(min_length=1)  # the pods' labels (the workload's selector)

    def describe(self) -> str:
        over = "zones" if "zone" in self.topology else "nodes"
        how = "must" if self.hard else "should"
        return (
            f"spread the pods of {self.target} over {over}: counts {how} differ by at "
            f"most {self.max_skew}"
        )

    def constraint(self) -> dict[str, Any]:
        return {
            "maxSkew": self.max_skew,
            "topologyKey": self.topology,
            "whenUnsatisfiable": "DoNotSchedule" if self.hard else "ScheduleAnyway",
            "labelSelector": {"matchLabels": dict(self.selector)},
        }

    def write(self) -> tuple[str, dict[str, Any]]:
        return self._patch({"topologySpreadConstraints": [self.constraint()]})

    def edits(self, live: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            {"path": "spec.template.spec.topologySpreadConstraints", "value": [self.constraint()]}
        ]


class Mount(_Template):
    """A ConfigMap, Secret or claim into one container: as files at `path`, as every key of it
    in the environment (`path` ""), or one key as one variable (`variable`, `key`)."""

    op: Literal["mount"] = "mount"
    container: str = Field(pattern=DNS)
    source_kind: Literal["ConfigMap", "Secret", "PersistentVolumeClaim"]
    source: str = Field(pattern=DNS)
    path: str = Field(default="", pattern=r"^(/[^\s]*)?$")
    variable: str = Field(default="", pattern=r"^([A-Za-z_][A-Za-z0-9_]*)?$")
    key: str = ""
    env_from: list[dict[str, Any]] = []  # the container's envFrom after the change (replaced)

    def describe(self) -> str:
        what = f"{self.source_kind} {self.source}"
        if self.path:
            return f"mount {what} into container {self.container} of {self.target} at {self.path}"
        if self.variable:
            return (
                f"set {self.variable} in container {self.container} of {self.target} from "
                f"key {self.key} of {what}"
            )
        return f"load every key of {what} into the environment of {self.target}"

    @property
    def _volume(self) -> str:
        return f"{self.source}-{'claim' if self.source_kind == 'PersistentVolumeClaim' else 'vol'}"[
            :63
        ]

    def _source(self) -> dict[str, Any]:
        if self.source_kind == "ConfigMap":
            return {"configMap": {"name": self.source}}
        if self.source_kind == "Secret":
            return {"secret": {"secretName": self.source}}
        return {"persistentVolumeClaim": {"claimName": self.source}}

    def write(self) -> tuple[str, dict[str, Any]]:
        container: dict[str, Any] = {"name": self.container}
        spec: dict[str, Any] = {"containers": [container]}
        reference = "configMapKeyRef" if self.source_kind == "ConfigMap" else "secretKeyRef"
        if self.path:
            spec["volumes"] = [{"name": self._volume, **self._source()}]
            container["volumeMounts"] = [{"name": self._volume, "mountPath": self.path}]
        elif self.variable:
            container["env"] = [
                {
                    "name": self.variable,
                    "valueFrom": {
                        reference: {"name": self.source, "key": self.key or self.variable.lower()}
                    },
                }
            ]
        else:
            container["envFrom"] = self.env_from
        return self._patch(spec)

    def edits(self, live: dict[str, Any]) -> list[dict[str, Any]]:
        return []  # a mount adds list items: made by a gated write, not a manifest edit
