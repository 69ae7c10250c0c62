"""The pod row: READY, STATUS and RESTARTS computed by Kubernetes' own rules.

STATUS is the most read cell in `kubectl get pods` and people act on it, so it follows the
printer step by step: the phase (or `status.reason`), overridden by the first failing or waiting
init container (`Init:1/2`, `Init:CrashLoopBackOff`), then by the first container that is waiting
or terminated (`CrashLoopBackOff`, `OOMKilled`, `Completed`, `ExitCode:1`), then `Terminating` (or
`Unknown` for a pod lost with its node) once a deletion is under way. Sidecars (init containers
with `restartPolicy: Always`) count as containers. RESTARTS reads `3 (2m ago)`.

This module reads pod JSON only; it knows nothing of storage or of other kinds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sandbox.tables.cells import NONE, condition_status, field, items
from sandbox.tables.durations import epoch, human_duration, since
from sandbox.tables.printer import AGE, NAME, Column, Printer, wide

_TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})
_SUCCEEDED = [
    {
        "type": "Completed",
        "status": "True",
        "reason": "Succeeded",
        "message": "The pod has completed successfully.",
    }
]
_FAILED = [
    {"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}
]


@dataclass
class Restarts:
    """Restarts summed over containers, and when the latest one ended (epoch seconds)."""

    count: int = 0
    last: float | None = None

    def add(self, container: Mapping[str, Any]) -> None:
        self.count += int(container.get("restartCount") or 0)
        finished = epoch(field(field(container, "lastState"), "terminated").get("finishedAt"))
        if finished is not None and (self.last is None or finished > self.last):
            self.last = finished


@dataclass
class PodSummary:
    """What the READY, STATUS and RESTARTS cells are made of."""

    reason: str
    ready: int
    total: int
    restarts: Restarts


def summarize(pod: Mapping[str, Any]) -> PodSummary:
    return _summarize(field(pod, "metadata"), field(pod, "spec"), field(pod, "status"))


def _summarize(meta: dict[str, Any], spec: dict[str, Any], status: dict[str, Any]) -> PodSummary:
    conditions = items(status, "conditions")
    reason = str(status.get("reason") or status.get("phase") or "Pending")
    if any(
        c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated" for c in conditions
    ):
        reason = "SchedulingGated"
    init_specs = items(spec, "initContainers")
    sidecars = {c.get("name") for c in init_specs if c.get("restartPolicy") == "Always"}
    total = len(items(spec, "containers")) + len(sidecars)
    init = _init_progress(items(status, "initContainerStatuses"), sidecars, len(init_specs))
    ready, restarts = init.ready, init.all_restarts
    if init.reason is not None:
        reason = init.reason
    if init.reason is None or condition_status(conditions, "Initialized") == "True":
        restarts = init.sidecar_restarts
        reason, running_ready, running = _container_progress(
            items(status, "containerStatuses"), reason, restarts
        )
        ready += running_ready
        if reason == "Completed" and running:
            pod_ready = condition_status(conditions, "Ready") == "True"
            reason = "Running" if pod_ready else "NotReady"
    if meta.get("deletionTimestamp") is not None:
        reason = _deletion_reason(status, reason)
    return PodSummary(reason, ready, total, restarts)


@dataclass
class _InitProgress:
    reason: str | None  # None once every init container is done (or is a started sidecar)
    ready: int
    all_restarts: Restarts
    sidecar_restarts: Restarts


def _init_progress(statuses: list[Any], sidecars: set[Any], declared: int) -> _InitProgress:
    everything, sidecar = Restarts(), Restarts()
    ready = 0
    for index, container in enumerate(statuses):
        everything.add(container)
        is_sidecar = container.get("name") in sidecars
        if is_sidecar:
            sidecar.add(container)
        state = field(container, "state")
        terminated = state.get("terminated")
        if terminated is not None and not terminated.get("exitCode"):
            continue
        if is_sidecar and container.get("started"):
            ready += 1 if container.get("ready") else 0
            continue
        reason = _init_reason(index, declared, terminated, state.get("waiting"))
        return _InitProgress(reason, ready, everything, sidecar)
    return _InitProgress(None, ready, everything, sidecar)


def _init_reason(index: int, declared: int, terminated: Any, waiting: Any) -> str:
    if terminated is not None:
        return "Init:" + _terminated_reason(terminated)
    waiting_reason = (waiting or {}).get("reason")
    if waiting_reason and waiting_reason != "PodInitializing":
        return f"Init:{waiting_reason}"
    return f"Init:{index}/{declared}"


def _terminated_reason(terminated: Mapping[str, Any]) -> str:
    if terminated.get("reason"):
        return str(terminated["reason"])
    if terminated.get("signal"):
        return f"Signal:{terminated['signal']}"
    return f"ExitCode:{terminated.get('exitCode') or 0}"


def _container_progress(
    statuses: list[Any], reason: str, restarts: Restarts
) -> tuple[str, int, bool]:
    """(reason, ready containers, any ready and running); the first container's reason wins."""
    ready, running = 0, False
    for container in reversed(statuses):
        restarts.add(container)
        state = field(container, "state")
        waiting, terminated = state.get("waiting"), state.get("terminated")
        if waiting is not None and waiting.get("reason"):
            reason = str(waiting["reason"])
        elif terminated is not None:
            reason = _terminated_reason(terminated)
        elif container.get("ready") and state.get("running") is not None:
            running = True
            ready += 1
    return reason, ready, running


def _deletion_reason(status: Mapping[str, Any], reason: str) -> str:
    if status.get("reason") == "NodeLost":
        return "Unknown"
    return reason if status.get("phase") in _TERMINAL_PHASES else "Terminating"


def restarts_text(restarts: Restarts, now: float) -> str:
    if restarts.count and restarts.last is not None:
        return f"{restarts.count} ({human_duration(now - restarts.last)} ago)"
    return str(restarts.count)


def _readiness_gates(spec: Mapping[str, Any], status: Mapping[str, Any]) -> str:
    gates = items(spec, "readinessGates")
    if not gates:
        return NONE
    conditions = items(status, "conditions")
    passed = sum(condition_status(conditions, g.get("conditionType")) == "True" for g in gates)
    return f"{passed}/{len(gates)}"


def _pod_ip(status: Mapping[str, Any]) -> str:
    ips = items(status, "podIPs")
    first = ips[0].get("ip") if ips and isinstance(ips[0], dict) else None
    return str(first or status.get("podIP") or NONE)


def _pod_cells(pod: dict[str, Any], now: float) -> list[Any]:
    meta, spec, status = field(pod, "metadata"), field(pod, "spec"), field(pod, "status")
    summary = _summarize(meta, spec, status)
    return [
        str(meta.get("name", "")),
        f"{summary.ready}/{summary.total}",
        summary.reason,
        restarts_text(summary.restarts, now),
        since(meta.get("creationTimestamp"), now),
        _pod_ip(status),
        spec.get("nodeName") or NONE,
        status.get("nominatedNodeName") or NONE,
        _readiness_gates(spec, status),
    ]


def _pod_conditions(pod: dict[str, Any]) -> list[dict[str, str]] | None:
    phase = field(pod, "status").get("phase")
    if phase == "Succeeded":
        return _SUCCEEDED
    return _FAILED if phase == "Failed" else None


POD = Printer(
    (
        NAME,
        Column("Ready", "Ready containers out of all containers (sidecars included)."),
        Column("Status", "The pod's aggregate status, as kubectl derives it."),
        Column("Restarts", "Container restarts, and how long ago the latest one happened."),
        AGE,
        wide("IP", "The pod's first IP address."),
        wide("Node", "The node the pod is bound to."),
        wide("Nominated Node", "The node a preempting pod is waiting for."),
        wide("Readiness Gates", "Readiness gates that are met, out of all declared."),
    ),
    _pod_cells,
    _pod_conditions,
)

PRINTERS: Mapping[tuple[str, str], Printer] = {("", "Pod"): POD}
