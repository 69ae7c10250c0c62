"""Fault specs: the kinds of trouble a sandbox can be given, validated from plain dicts.

`parse_spec({"kind": "node-heartbeat", "node": "node-2", "at": 30})` returns a typed frozen spec
and its `at`, or raises `FaultSpecError` naming the kind, the field and what is wrong. Shortcut
kinds (`gpu-fault`, `memory-leak`, `error-rate`, `slow`) parse into the general spec they stand
for. This module knows nothing of clusters or of how a spec is applied (`sandbox.faults.book`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from sandbox.quantity import millicores, units
from sandbox.store import Obj
from sandbox.version import is_version
from sandbox.world import Condition

GPU_CONDITION = Condition("False", "GPUFault", "XID 79: GPU has fallen off the bus")
CONDITION_STATUSES = ("True", "False", "Unknown")
API_RATES = ("error_rate", "throttle_rate", "timeout_rate", "drop_watch_rate")
PROVISION_FAILURE = (
    "InsufficientInstanceCapacity: the sandbox cloud has no capacity for this machine's instance "
    "type; retry later or choose another SandboxMachineTemplate"
)


class FaultError(Exception):
    """Base of the fault model's errors."""


class FaultSpecError(FaultError, ValueError):
    """A fault spec is malformed: names the kind, the field and what to write instead."""

    def __init__(self, kind: str, field: str, reason: str) -> None:
        self.kind, self.field, self.reason = kind, field, reason
        where = f"fault {kind!r}" if kind else "fault"
        super().__init__(f"{where}: field {field!r}: {reason}")


class UnknownFault(FaultError, LookupError):
    def __init__(self, fault_id: str) -> None:
        self.fault_id = fault_id
        super().__init__(f'fault "{fault_id}" not found; `GET /kubecrew/v1/faults` lists them')


# -- reading params ---------------------------------------------------------------------------


class _Params:
    """The params of one spec, read field by field with errors naming the field."""

    def __init__(self, kind: str, raw: Mapping[str, Any]) -> None:
        self.kind, self.raw = kind, dict(raw)
        self.used: set[str] = {"kind", "at"}

    def value(self, name: str, required: bool) -> Any:
        self.used.add(name)
        value = self.raw.get(name)
        if value is None and required:
            raise FaultSpecError(self.kind, name, "is required")
        return value

    def text(self, name: str, *, required: bool = True, default: str = "") -> str:
        value = self.value(name, required)
        if value is None:
            return default
        if not isinstance(value, str) or not value.strip():
            raise FaultSpecError(self.kind, name, f"must be a non-empty string, not {value!r}")
        return value.strip()

    def optional_text(self, name: str) -> str | None:
        return self.text(name, required=False) if self.raw.get(name) is not None else None

    def number(self, name: str, *, low: float = 0.0, high: float | None = None) -> float:
        value = self.value(name, True)
        try:
            number = float(value) if not isinstance(value, bool) else float("nan")
        except (TypeError, ValueError):
            number = float("nan")
        if number != number or number < low or (high is not None and number > high):
            span = f"between {low:g} and {high:g}" if high is not None else f"{low:g} or more"
            raise FaultSpecError(self.kind, name, f"must be a number {span}, not {value!r}")
        return number

    def rate(self, name: str) -> float:
        return self.number(name, high=1.0) if self.raw.get(name) is not None else 0.0

    def quantity(self, name: str) -> float:
        value = self.value(name, True)
        try:
            amount = float(units(value))
        except (TypeError, ValueError, AttributeError):
            amount = -1.0
        if amount < 0:
            raise FaultSpecError(
                self.kind, name, f"must be a quantity such as 10Mi (per second), not {value!r}"
            )
        return amount

    def selector(self, name: str = "selector") -> dict[str, str] | None:
        value = self.value(name, False)
        if value is None:
            return None
        if isinstance(value, str):  # "app=web,tier=front", as the CLI passes it
            pairs = [p.split("=", 1) for p in value.split(",") if p.strip()]
            if not pairs or any(len(p) != 2 or not p[0].strip() for p in pairs):
                raise FaultSpecError(self.kind, name, f"must look like app=web,tier=x: {value!r}")
            return {k.strip(): v.strip() for k, v in pairs}
        if isinstance(value, Mapping) and all(isinstance(k, str) for k in value):
            return {k: str(v) for k, v in value.items()}
        raise FaultSpecError(self.kind, name, f"must be a map of labels, not {value!r}")

    def done(self) -> None:
        extra = sorted(set(self.raw) - self.used)
        if extra:
            raise FaultSpecError(self.kind, extra[0], "is not a field of this kind of fault")


# -- the kinds --------------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeHeartbeat:
    """The node's kubelet stops renewing its Lease and posting status."""

    kind: ClassVar[str] = "node-heartbeat"
    node: str

    @classmethod
    def parse(cls, p: _Params) -> NodeHeartbeat:
        return cls(p.text("node"))


@dataclass(frozen=True)
class NodeCondition:
    """A node condition the kubelet reports whatever else is true (Ready False, GPUHealthy...)."""

    kind: ClassVar[str] = "node-condition"
    node: str
    type: str
    status: str
    reason: str = ""
    message: str = ""

    @classmethod
    def parse(cls, p: _Params) -> NodeCondition:
        node, kind = p.text("node"), p.text("type")
        status = p.text("status")
        if status not in CONDITION_STATUSES:
            raise FaultSpecError(p.kind, "status", f"must be one of True, False, Unknown: {status}")
        reason = p.text("reason", required=False, default=f"Sandbox{kind}Fault")
        message = p.text("message", required=False, default=f"{kind} forced by a sandbox fault")
        return cls(node, kind, status, reason, message)

    def condition(self) -> Condition:
        return Condition(self.status, self.reason, self.message)


@dataclass(frozen=True)
class GpuFault(NodeCondition):
    """Shortcut: GPUHealthy False, as a GPU health checker reports an XID 79."""

    kind: ClassVar[str] = "gpu-fault"

    @classmethod
    def parse(cls, p: _Params) -> GpuFault:
        g = GPU_CONDITION
        return cls(p.text("node"), "GPUHealthy", g.status, g.reason, g.message)


@dataclass(frozen=True)
class ImageMissing:
    """The registry no longer has an image: "repo" (every tag) or "repo:tag"."""

    kind: ClassVar[str] = "image-missing"
    image: str

    @classmethod
    def parse(cls, p: _Params) -> ImageMissing:
        return cls(p.text("image"))


def _fraction(value: Any) -> float:
    number = float(value)
    if not 0.0 <= number <= 1.0:
        raise ValueError(value)
    return number


def _cpu(value: Any) -> float:
    return float(millicores(value)) if isinstance(value, str) else float(value)


def _bytes(value: Any) -> float:
    return float(units(value))


def _pattern(value: Any) -> str:
    if value not in ("steady", "spiky"):
        raise ValueError(value)
    return str(value)


def _lines(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    return tuple(str(line) for line in value)


def _flag(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    return {"true": True, "false": False}[str(value).lower()]


# Profile fields a fault may change, with how to read each (quantities for memory and CPU).
PROFILE_CHANGES: dict[str, Callable[[Any], Any]] = {
    "startup_seconds": float,
    "cpu_millis": _cpu,
    "memory_bytes": _bytes,
    "memory_growth": _bytes,
    "cpu_pattern": _pattern,
    "requests_per_second": float,
    "error_rate": _fraction,
    "latency_ms": float,
    "log_lines": _lines,
    "error_log_lines": _lines,
    "runs_forever": _flag,
    "run_seconds": float,
    "exit_code": int,
    "startup_log_lines": _lines,
    "required_env": _lines,
    "profile": str,  # switch to another named profile (e.g. one a scenario defines)
}


@dataclass(frozen=True)
class AppProfile:
    """Applications (by namespace, pod labels and/or image) behave differently: a leak, errors,
    slowness. `changes` are fields of `sandbox.kubelet.profiles.Profile`."""

    kind: ClassVar[str] = "app-profile"
    changes: tuple[tuple[str, Any], ...]
    namespace: str | None = None
    selector: tuple[tuple[str, str], ...] | None = None
    image: str | None = None

    @classmethod
    def parse(cls, p: _Params) -> AppProfile:
        raw = p.value("changes", True)
        if not isinstance(raw, Mapping) or not raw:
            raise FaultSpecError(p.kind, "changes", "must be a non-empty map of profile fields")
        return cls(tuple(sorted(_changes(p.kind, raw).items())), *_targets(p))

    @classmethod
    def shortcut(cls, p: _Params, changes: dict[str, Any]) -> AppProfile:
        return cls(tuple(sorted(changes.items())), *_targets(p))

    def matches(self, pod: Obj) -> bool:
        meta = pod["metadata"]
        if self.namespace is not None and meta.get("namespace") != self.namespace:
            return False
        labels = meta.get("labels") or {}
        if self.selector is not None and any(labels.get(k) != v for k, v in self.selector):
            return False
        if self.image is None:
            return True
        containers = (pod.get("spec") or {}).get("containers") or []
        return any(self.image in str(c.get("image", "")) for c in containers)


def _changes(kind: str, raw: Mapping[str, Any]) -> dict[str, Any]:
    changes = {}
    for name, value in raw.items():
        convert = PROFILE_CHANGES.get(name)
        if convert is None:
            known = ", ".join(sorted(PROFILE_CHANGES))
            raise FaultSpecError(kind, f"changes.{name}", f"is not a profile field ({known})")
        try:
            changes[name] = convert(value)
        except (TypeError, ValueError, KeyError):
            raise FaultSpecError(kind, f"changes.{name}", f"bad value {value!r}") from None
    return changes


def _targets(p: _Params) -> tuple[str | None, tuple[tuple[str, str], ...] | None, str | None]:
    selector = p.selector()
    return (
        p.optional_text("namespace"),
        tuple(sorted(selector.items())) if selector is not None else None,
        p.optional_text("image"),
    )


@dataclass(frozen=True)
class MachineProvisionFails:
    """Instances for the Machines of one MachineDeployment (of every one, without `deployment`)
    fail to come up: the Machines go Failed with `reason` and `message` instead of joining."""

    kind: ClassVar[str] = "machine-provision-fails"
    deployment: str | None = None
    reason: str = "CreateError"
    message: str = PROVISION_FAILURE

    @classmethod
    def parse(cls, p: _Params) -> MachineProvisionFails:
        return cls(
            p.optional_text("deployment"),
            p.text("reason", required=False, default="CreateError"),
            p.text("message", required=False, default=PROVISION_FAILURE),
        )


@dataclass(frozen=True)
class NodeJoinsNotReady:
    """The next `count` Nodes of a MachineDeployment and/or Kubernetes version (any, without
    either) join with Ready False, and stay so until the fault is cleared."""

    kind: ClassVar[str] = "node-joins-not-ready"
    deployment: str | None = None
    version: str | None = None
    count: int = 1

    @classmethod
    def parse(cls, p: _Params) -> NodeJoinsNotReady:
        deployment, version = p.optional_text("deployment"), p.optional_text("version")
        if version is not None and not is_version(version):
            raise FaultSpecError(p.kind, "version", f"must look like v1.37.2, not {version!r}")
        count = p.number("count", low=1) if p.raw.get("count") is not None else 1.0
        if not count.is_integer():
            raise FaultSpecError(p.kind, "count", f"must be a whole number, not {count:g}")
        return cls(deployment, version, int(count))


@dataclass(frozen=True)
class ApiFault:
    """The API server itself misbehaves for a fraction of requests."""

    kind: ClassVar[str] = "api"
    error_rate: float = 0.0
    throttle_rate: float = 0.0
    timeout_rate: float = 0.0
    drop_watch_rate: float = 0.0

    @classmethod
    def parse(cls, p: _Params) -> ApiFault:
        made = cls(*(p.rate(name) for name in API_RATES))
        if not any(getattr(made, name) for name in API_RATES):
            raise FaultSpecError(
                p.kind, "error_rate", f"set at least one of {', '.join(API_RATES)}"
            )
        return made


FaultSpec = (
    NodeHeartbeat
    | NodeCondition
    | ImageMissing
    | AppProfile
    | ApiFault
    | MachineProvisionFails
    | NodeJoinsNotReady
)

_SHORTCUTS: dict[str, Callable[[_Params], AppProfile]] = {
    "memory-leak": lambda p: AppProfile.shortcut(p, {"memory_growth": p.quantity("rate")}),
    "error-rate": lambda p: AppProfile.shortcut(p, {"error_rate": p.number("rate", high=1.0)}),
    "slow": lambda p: AppProfile.shortcut(p, {"latency_ms": p.number("latency_ms")}),
}
_KINDS: dict[str, Callable[[_Params], FaultSpec]] = {
    cls.kind: cls.parse
    for cls in (
        NodeHeartbeat,
        NodeCondition,
        GpuFault,
        ImageMissing,
        AppProfile,
        ApiFault,
        MachineProvisionFails,
        NodeJoinsNotReady,
    )
}
_KINDS.update(_SHORTCUTS)
KINDS = tuple(sorted(_KINDS))


def parse_spec(raw: object) -> tuple[FaultSpec, float | None]:
    """A spec and its `at` (None: now) from a dict such as `{"kind": "slow", "latency_ms": 900}`."""
    if not isinstance(raw, Mapping):
        raise FaultSpecError("", "kind", f"a fault is a map with a kind, not {raw!r}")
    kind = raw.get("kind")
    parser = _KINDS.get(kind) if isinstance(kind, str) else None
    if parser is None or not isinstance(kind, str):
        raise FaultSpecError("", "kind", f"{kind!r} is not one of {', '.join(KINDS)}")
    params = _Params(kind, raw)
    spec = parser(params)
    at = params.number("at") if raw.get("at") is not None else None
    params.done()
    return spec, at


def describe(spec: FaultSpec) -> dict[str, Any]:
    """A spec as JSON-ready params (kind apart)."""
    params: dict[str, Any] = {}
    for f in dataclasses.fields(spec):
        value = getattr(spec, f.name)
        if value is None:
            continue
        params[f.name] = dict(value) if isinstance(value, tuple) else value
    return params
