"""Changes that make objects beside a workload or in a namespace, written as manifests applied
server-side: a Service in front of a workload, a network policy, an Ingress route, a disruption
budget, an autoscaler, a ConfigMap, a new workload; and re-pointing a Service that exists.

Each renders its objects from typed parameters (never a manifest handed in from outside), so
the policy store and the kube server's gate judge exactly what will exist, and validation knows
what to read back. Must not know: any agent, any grammar, the servers' internals.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agents.runtime.changes.kinds.base import DNS, ENV_NAME, LABEL_KEY, Change, Check, Manifested
from core import quantity

Protocol = Literal["TCP", "UDP", "SCTP"]
Labels = dict[Annotated[str, Field(pattern=LABEL_KEY)], Annotated[str, Field(max_length=63)]]


class Port(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    port: int = Field(ge=1, le=65535)
    target_port: int | str = 0  # 0: the same as port
    protocol: Protocol = "TCP"
    name: str = ""

    def spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "port": self.port,
            "targetPort": self.target_port or self.port,
            "protocol": self.protocol,
        }
        if self.name:
            spec["name"] = self.name
        return spec


class Expose(Manifested):
    """A Service routing to a workload's pods (kubectl expose)."""

    op: Literal["expose"] = "expose"
    workload: str  # "Deployment web": what it routes to, in words
    selector: Labels = Field(min_length=1)
    ports: list[Port] = Field(min_length=1)
    type: Literal["ClusterIP", "NodePort", "LoadBalancer"] = "ClusterIP"
    check: Check = "endpoints"

    def describe(self) -> str:
        ports = ", ".join(f"{p.port}->{p.target_port or p.port}/{p.protocol}" for p in self.ports)
        return f"expose {self.workload} as {self.type} {self.target} on {ports}"

    def manifests(self) -> list[dict[str, Any]]:
        return [
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": self.metadata(),
                "spec": {
                    "type": self.type,
                    "selector": dict(self.selector),
                    "ports": [p.spec() for p in self.ports],
                },
            }
        ]

    def expected(self) -> dict[str, Any]:
        return {"spec.selector": dict(self.selector)}


class Retarget(Change):
    """A Service pointed at other pods (its whole selector) or another container port."""

    op: Literal["retarget"] = "retarget"
    selector: Labels | None = None  # the whole selector after the change
    removed: list[str] = []  # selector keys the change drops
    port: int = Field(default=0, ge=0, le=65535)  # the Service port whose targetPort changes
    target_port: int | str = 0
    type: Literal["ClusterIP", "NodePort", "LoadBalancer"] | None = None  # spec.type after
    because: str = ""  # "the pods of Deployment web-green": what the selector now matches
    check: Check = "endpoints"

    @model_validator(mode="after")
    def _something(self) -> Retarget:
        if self.selector is None and not self.target_port and self.type is None:
            raise ValueError("give the new selector, the port and its new targetPort, or a type")
        return self

    def describe(self) -> str:
        said = []
        if self.selector is not None:
            labels = ",".join(f"{k}={v}" for k, v in sorted(self.selector.items()))
            said.append(f"select {labels}" + (f" ({self.because})" if self.because else ""))
        if self.target_port:
            said.append(f"send port {self.port} to container port {self.target_port}")
        if self.type is not None and not said:
            return f"make {self.target} a {self.type} Service"
        if self.type is not None:
            said.append(f"make it a {self.type} Service")
        return f"point {self.target} elsewhere: {'; '.join(said)}"

    def write(self) -> tuple[str, dict[str, Any]]:
        spec: dict[str, Any] = {}
        if self.selector is not None:
            spec["selector"] = {**dict(self.selector), **dict.fromkeys(self.removed)}
        if self.target_port:
            spec["ports"] = [{"port": self.port, "targetPort": self.target_port}]
        if self.type is not None:
            spec["type"] = self.type
        return "patch", {**self._kind(), "patch": {"spec": spec}, "patch_type": "strategic"}

    def edits(self, live: dict[str, Any]) -> list[dict[str, Any]]:
        edits: list[dict[str, Any]] = []
        if self.selector is not None:
            edits.append({"path": "spec.selector", "value": dict(self.selector)})
        if self.target_port:
            edits.append(
                {"path": f"spec.ports[port={self.port}].targetPort", "value": self.target_port}
            )
        if self.type is not None:
            edits.append({"path": "spec.type", "value": self.type})
        return edits

    def expected(self) -> dict[str, Any]:
        expected: dict[str, Any] = {} if self.type is None else {"spec.type": self.type}
        if self.selector is not None:
            expected["spec.selector"] = dict(self.selector)
        return expected


class Peer(BaseModel):
    """Who a network policy lets in or out: pods (by labels), a namespace, DNS, or a CIDR."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    pods: Labels | None = None  # in the policy's namespace, or in `namespace` when both
    namespace: str = Field(default="", pattern=r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$")
    dns: bool = False  # name resolution: port 53 over UDP and TCP, to any resolver
    cidr: str = ""
    said: str = ""  # how the person named it ("web", "namespace data")

    def spec(self) -> dict[str, Any]:
        if self.cidr:
            return {"ipBlock": {"cidr": self.cidr}}
        peer: dict[str, Any] = {}
        if self.namespace:
            peer["namespaceSelector"] = {
                "matchLabels": {"kubernetes.io/metadata.name": self.namespace}
            }
        if self.pods is not None:
            peer["podSelector"] = {"matchLabels": dict(self.pods)}
        return peer

    def __str__(self) -> str:
        if self.dns:
            return "DNS"
        return self.said or self.cidr or self.namespace or str(self.pods)


class NetworkRule(Manifested):
    """A NetworkPolicy: the pods it selects ({}: every pod of the namespace), one direction,
    the peers allowed (none: that direction denied) and the ports they may use."""

    op: Literal["network_policy"] = "network_policy"
    pod_selector: Labels = {}
    direction: Literal["ingress", "egress"] = "ingress"
    peers: list[Peer] = []
    ports: list[Port] = []
    selected: str = ""  # the selected pods in words ("the pods of Deployment api")

    def describe(self) -> str:
        pods = self.selected or ("every pod" if not self.pod_selector else str(self.pod_selector))
        where = (
            "" if pods.endswith(f" in {self.target.namespace}") else f" in {self.target.namespace}"
        )
        if not self.peers:
            return (
                f"deny all {self.direction} traffic of {pods}{where} ({self.target.kind} "
                f"{self.target.name})"
            )
        way = "from" if self.direction == "ingress" else "to"
        ports = (
            f" on {', '.join(f'{p.port}/{p.protocol}' for p in self.ports)}" if self.ports else ""
        )
        return (
            f"allow {self.direction} of {pods}{where} only {way} "
            f"{', '.join(map(str, self.peers))}{ports} ({self.target.kind} {self.target.name})"
        )

    def manifests(self) -> list[dict[str, Any]]:
        policy_type = self.direction.capitalize()
        rules: list[dict[str, Any]] = []
        parties = [p for p in self.peers if not p.dns]
        side = "from" if self.direction == "ingress" else "to"
        if parties:
            rule: dict[str, Any] = {side: [p.spec() for p in parties]}
            if self.ports:
                rule["ports"] = [{"port": p.port, "protocol": p.protocol} for p in self.ports]
            rules.append(rule)
        if any(p.dns for p in self.peers):
            rules.append(
                {"ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}]}
            )
        spec: dict[str, Any] = {
            "podSelector": {"matchLabels": dict(self.pod_selector)} if self.pod_selector else {},
            "policyTypes": [policy_type],
            self.direction: rules,
        }
        return [
            {
                "apiVersion": "networking.k8s.io/v1",
                "kind": "NetworkPolicy",
                "metadata": self.metadata(),
                "spec": spec,
            }
        ]


class Route(Manifested):
    """An Ingress rule: a host (or any) and a path to a Service's port."""

    op: Literal["route"] = "route"
    host: str = Field(default="", pattern=r"^([a-z0-9*]([-a-z0-9.]*[a-z0-9])?)?$")
    path: str = Field(default="/", pattern=r"^/[^\s]*$")
    service: str = Field(pattern=DNS)
    port: int | str = 80
    ingress_class: str = ""

    def describe(self) -> str:
        at = f"{self.host or '*'}{self.path}"
        return f"route {at} to Service {self.service} port {self.port} ({self.target})"

    def manifests(self) -> list[dict[str, Any]]:
        port = {"number": self.port} if isinstance(self.port, int) else {"name": self.port}
        rule: dict[str, Any] = {
            "http": {
                "paths": [
                    {
                        "path": self.path,
                        "pathType": "Prefix",
                        "backend": {"service": {"name": self.service, "port": port}},
                    }
                ]
            }
        }
        if self.host:
            rule["host"] = self.host
        spec: dict[str, Any] = {"rules": [rule]}
        if self.ingress_class:
            spec["ingressClassName"] = self.ingress_class
        return [
            {
                "apiVersion": "networking.k8s.io/v1",
                "kind": "Ingress",
                "metadata": self.metadata(),
                "spec": spec,
            }
        ]


class Budget(Manifested):
    """A PodDisruptionBudget over a workload's pods: at least `min_available` stay up, or at
    most `max_unavailable` go down, during voluntary disruptions (drains, upgrades)."""

    op: Literal["budget"] = "budget"
    workload: str
    selector: Labels = Field(min_length=1)
    min_available: int | str | None = None
    max_unavailable: int | str | None = None

    @model_validator(mode="after")
    def _one(self) -> Budget:
        if (self.min_available is None) == (self.max_unavailable is None):
            raise ValueError("give min_available or max_unavailable (one of them)")
        for value in (self.min_available, self.max_unavailable):
            if isinstance(value, str) and not value.rstrip("%").isdigit():
                raise ValueError(f"{value!r} is not a count or a percentage such as 50%")
        return self

    def describe(self) -> str:
        rule = (
            f"at least {self.min_available} available"
            if self.min_available is not None
            else f"at most {self.max_unavailable} unavailable"
        )
        return f"keep {rule} of the pods of {self.workload} during disruptions ({self.target})"

    def manifests(self) -> list[dict[str, Any]]:
        spec: dict[str, Any] = {"selector": {"matchLabels": dict(self.selector)}}
        if self.min_available is not None:
            spec["minAvailable"] = self.min_available
        else:
            spec["maxUnavailable"] = self.max_unavailable
        return [
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": self.metadata(),
                "spec": spec,
            }
        ]


class Autoscaler(Manifested):
    """A HorizontalPodAutoscaler (autoscaling/v2) between min and max replicas on average CPU
    and/or memory utilization (percent of requests)."""

    op: Literal["autoscaler"] = "autoscaler"
    workload_kind: Literal["Deployment", "StatefulSet"] = "Deployment"
    workload: str = Field(pattern=DNS)
    min: int = Field(default=1, ge=1, le=1000)
    max: int = Field(ge=1, le=1000)
    cpu: int | None = Field(default=None, ge=1, le=1000)
    memory: int | None = Field(default=None, ge=1, le=1000)

    @model_validator(mode="after")
    def _bounds(self) -> Autoscaler:
        if self.min > self.max:
            raise ValueError(f"min {self.min} is above max {self.max}")
        if self.cpu is None and self.memory is None:
            raise ValueError("give a cpu or memory utilization target (percent)")
        return self

    def describe(self) -> str:
        on = " and ".join(
            f"{what} at {value}%"
            for what, value in (("CPU", self.cpu), ("memory", self.memory))
            if value
        )
        return (
            f"autoscale {self.workload_kind} {self.workload} between {self.min} and "
            f"{self.max} replicas on {on} ({self.target})"
        )

    def manifests(self) -> list[dict[str, Any]]:
        metrics = [
            {
                "type": "Resource",
                "resource": {
                    "name": name,
                    "target": {"type": "Utilization", "averageUtilization": value},
                },
            }
            for name, value in (("cpu", self.cpu), ("memory", self.memory))
            if value
        ]
        spec = {
            "scaleTargetRef": {
                "apiVersion": "apps/v1",
                "kind": self.workload_kind,
                "name": self.workload,
            },
            "minReplicas": self.min,
            "maxReplicas": self.max,
            "metrics": metrics,
        }
        return [
            {
                "apiVersion": "autoscaling/v2",
                "kind": "HorizontalPodAutoscaler",
                "metadata": self.metadata(),
                "spec": spec,
            }
        ]


class NewClaim(Manifested):
    """A PersistentVolumeClaim of `size`, in the cluster's default StorageClass unless one is
    named, mounted by one node at a time unless `shared` (ReadWriteMany)."""

    op: Literal["new_claim"] = "new_claim"
    size: Annotated[str, Field(pattern=r"^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|k|M|G|T|P)?$")]
    storage_class: Annotated[str, Field(pattern=DNS)] | None = None
    shared: bool = False

    def describe(self) -> str:
        where = f" of class {self.storage_class}" if self.storage_class else ""
        mode = "ReadWriteMany" if self.shared else "ReadWriteOnce"
        return f"create {self.target}: {self.size}{where}, {mode}"

    def manifests(self) -> list[dict[str, Any]]:
        spec: dict[str, Any] = {
            "accessModes": ["ReadWriteMany" if self.shared else "ReadWriteOnce"],
            "resources": {"requests": {"storage": self.size}},
        }
        if self.storage_class:
            spec["storageClassName"] = self.storage_class
        return [
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": self.metadata(),
                "spec": spec,
            }
        ]


class ConfigData(Change):
    """Keys of a ConfigMap: a new one (apply), or keys set and removed (None) on one that
    exists (a merge patch)."""

    op: Literal["config_data"] = "config_data"
    data: dict[Annotated[str, Field(pattern=r"^[-._a-zA-Z0-9]+$")], str | None] = Field(
        min_length=1
    )
    create: bool = False
    check: Check = "fields"

    def describe(self) -> str:
        said = ", ".join(
            f"remove {k}" if v is None else f"{k}={v}" for k, v in sorted(self.data.items())
        )
        return f"{'create' if self.create else 'set keys of'} {self.target}: {said}"

    def write(self) -> tuple[str, dict[str, Any]]:
        if self.create:
            manifest = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": self.target.name, "namespace": self.target.namespace},
                "data": {k: v for k, v in self.data.items() if v is not None},
            }
            return "apply", {
                "manifest": yaml.safe_dump(manifest),
                "namespace": self.target.namespace,
            }
        return "patch", {**self._kind(), "patch": {"data": dict(self.data)}, "patch_type": "merge"}

    def edits(self, live: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            {"path": f"data.{k}", "delete": True}
            if v is None
            else {"path": f"data.{k}", "value": v}
            for k, v in sorted(self.data.items())
        ]

    def proposal(self, live: dict[str, Any]) -> dict[str, Any]:
        return {**super().proposal(live), "action": "apply" if self.create else "patch"}

    def expected(self) -> dict[str, Any]:
        return {"data": dict(self.data)}


class Resources(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    requests: dict[Literal["cpu", "memory"], str] = {}
    limits: dict[Literal["cpu", "memory"], str] = {}

    @field_validator("requests", "limits")
    @classmethod
    def _quantities(cls, values: dict[str, str]) -> dict[str, str]:
        for value in values.values():
            if quantity.parse(value) is None:
                raise ValueError(f"{value!r} is not a Kubernetes quantity (e.g. 250m, 512Mi)")
        return values


class NewWorkload(Manifested):
    """A workload made from a description: its kind, image, replicas, command, port, variables,
    requests and limits, and a schedule for a CronJob."""

    op: Literal["new_workload"] = "new_workload"
    image: str = Field(min_length=1, max_length=512, pattern=r"^[^\s]+$")
    container: str = Field(default="", pattern=r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$")
    replicas: int = Field(default=1, ge=0, le=1000)
    command: list[str] = []
    port: int = Field(default=0, ge=0, le=65535)
    env: dict[Annotated[str, Field(pattern=ENV_NAME)], str] = {}
    resources: Resources = Resources()
    schedule: str = ""
    check: Check = "ready"

    @model_validator(mode="after")
    def _shape(self) -> NewWorkload:
        if self.target.kind not in (
            "Deployment",
            "StatefulSet",
            "DaemonSet",
            "Pod",
            "Job",
            "CronJob",
        ):
            raise ValueError(
                f"a new workload is a Deployment, StatefulSet, DaemonSet, Pod, Job "
                f"or CronJob, not a {self.target.kind}"
            )
        if (self.target.kind == "CronJob") != bool(self.schedule):
            raise ValueError("a CronJob needs a schedule, and only a CronJob has one")
        return self

    @property
    def carries_proposal(self) -> bool:
        """A new Deployment's or StatefulSet's replica count is judged as a scale by the gate
        itself, beside the apply: two actions, which no one proposal carries."""
        return self.target.kind not in ("Deployment", "StatefulSet") and super().carries_proposal

    def describe(self) -> str:
        parts = [f"create {self.target} running {self.image}"]
        if self.target.kind in ("Deployment", "StatefulSet"):
            parts.append(f"{self.replicas} replica{'s' * (self.replicas != 1)}")
        if self.command:
            parts.append(f"command `{' '.join(self.command)}`")
        if self.schedule:
            parts.append(f"on schedule '{self.schedule}'")
        if self.port:
            parts.append(f"port {self.port}")
        return ", ".join(parts)

    def _container(self) -> dict[str, Any]:
        container: dict[str, Any] = {
            "name": self.container or self.target.name,
            "image": self.image,
        }
        if self.command:
            container["command"] = list(self.command)
        if self.port:
            container["ports"] = [{"containerPort": self.port}]
        if self.env:
            container["env"] = [{"name": k, "value": v} for k, v in sorted(self.env.items())]
        resources = {
            k: dict(v)
            for k, v in (("requests", self.resources.requests), ("limits", self.resources.limits))
            if v
        }
        if resources:
            container["resources"] = resources
        return container

    def manifests(self) -> list[dict[str, Any]]:
        kind, labels = self.target.kind, {"app": self.target.name}
        pod: dict[str, Any] = {"containers": [self._container()]}
        meta = self.metadata(app=self.target.name)
        if kind == "Pod":
            return [{"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": pod}]
        template = {"metadata": {"labels": labels}, "spec": pod}
        if kind in ("Job", "CronJob"):
            pod["restartPolicy"] = "OnFailure"
            job = {"template": template, "backoffLimit": 4}
            if kind == "Job":
                return [{"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": job}]
            return [
                {
                    "apiVersion": "batch/v1",
                    "kind": "CronJob",
                    "metadata": meta,
                    "spec": {"schedule": self.schedule, "jobTemplate": {"spec": job}},
                }
            ]
        spec: dict[str, Any] = {"selector": {"matchLabels": labels}, "template": template}
        if kind != "DaemonSet":
            spec["replicas"] = self.replicas
        if kind == "StatefulSet":
            spec["serviceName"] = self.target.name
        return [{"apiVersion": "apps/v1", "kind": kind, "metadata": meta, "spec": spec}]

    def expected(self) -> dict[str, Any]:
        return {}
