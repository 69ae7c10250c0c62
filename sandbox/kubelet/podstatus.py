"""A pod's `status` as the kubelet reports it, computed from its container records.

Phase follows the kubelet's rules: Pending while initializing or while a container has never
run, Running while any runs (or will be restarted), Succeeded/Failed once every container has
terminated for good. Conditions are PodReadyToStartContainers, Initialized, ContainersReady and
Ready with Kubernetes' reasons and messages; PodScheduled is the scheduler's and is kept as
found, as are status fields other components own. A condition keeps its lastTransitionTime
unless its status changes, so rewriting an unchanged status is a no-op write. This module is
pure: it reads the pod and the records, never the store.
"""

from __future__ import annotations

from typing import Any

from sandbox.kubelet.containers import PodRuntime, Run, stamp
from sandbox.quantity import millicores, units
from sandbox.store import Obj

TERMINAL = ("Succeeded", "Failed")


def will_restart(run: Run, policy: str) -> bool:
    """Whether an exited run is started again under the pod's restartPolicy."""
    if run.sidecar or (policy == "Always" and not run.init):
        return True
    if policy == "Never":
        return False
    return run.exit_code != 0


def _init_phase(runtime: PodRuntime) -> str | None:
    for run in runtime.runs.values():
        if not run.init or run.sidecar:
            continue
        if run.phase == "done" and run.exit_code != 0:
            return "Failed"
        if run.phase != "done":
            return "Pending"
    return None


def phase(spec: Obj, runtime: PodRuntime) -> str:
    policy = str(spec.get("restartPolicy") or "Always")
    initializing = _init_phase(runtime)
    if initializing is not None:
        return initializing
    waiting = running = stopped = succeeded = 0
    for run in runtime.runs.values():
        if run.init:
            continue
        if run.phase == "running":
            running += 1
        elif run.phase in ("exited", "done"):
            stopped += 1
            succeeded += run.exit_code == 0
        elif run.last is not None:
            stopped += 1  # restarting after a crash
        else:
            waiting += 1
    if waiting:
        return "Pending"
    if running:
        return "Running"
    if policy == "Always" or any(
        r.phase == "crash-backoff" or (r.phase == "exited" and will_restart(r, policy))
        for r in runtime.runs.values()
        if not r.init
    ):
        return "Running"
    return "Succeeded" if stopped == succeeded else "Failed"


def build(
    pod: Obj, runtime: PodRuntime, *, phase_now: str, host_ip: str, node_ready: bool, now: float
) -> dict[str, Any]:
    spec = pod["spec"]
    old = pod.get("status") or {}
    images = {
        c["name"]: str(c.get("image") or "")
        for c in [*(spec.get("initContainers") or ()), *spec["containers"]]
    }
    inits = [r for r in runtime.runs.values() if r.init]
    mains = [r for r in runtime.runs.values() if not r.init]
    terminal = phase_now in TERMINAL
    incomplete = [
        r.name
        for r in inits
        if not (r.started if r.sidecar else (r.phase == "done" and r.exit_code == 0))
    ]
    unready = [r.name for r in [*mains, *(r for r in inits if r.sidecar)] if not r.ready]
    conditions = [
        _condition("PodReadyToStartContainers", runtime.mounted and not terminal),
        _condition(
            "Initialized",
            not incomplete or terminal,
            "" if not terminal else "PodCompleted",
            f"containers with incomplete status: [{' '.join(incomplete)}]",
        ),
        _ready("Ready", unready, terminal),
        _ready("ContainersReady", unready, terminal),
    ]
    if not node_ready:
        kept = next((c for c in old.get("conditions") or () if c.get("type") == "Ready"), None)
        if kept is not None and kept.get("status") != "True":
            conditions[2] = {k: v for k, v in kept.items() if k != "lastTransitionTime"}
    scheduled = [c for c in old.get("conditions") or () if c.get("type") == "PodScheduled"]
    status: dict[str, Any] = {
        **old,
        "phase": phase_now,
        "conditions": _keep_times([*conditions, *scheduled], old, now),
        "hostIP": host_ip,
        "hostIPs": [{"ip": host_ip}],
        "startTime": stamp(runtime.start_time),
        "qosClass": qos_class(spec),
        "containerStatuses": [r.status(images[r.name]) for r in mains],
    }
    if inits:
        status["initContainerStatuses"] = [r.status(images[r.name]) for r in inits]
    if runtime.mounted and runtime.pod_ip:
        status["podIP"] = runtime.pod_ip
        status["podIPs"] = [{"ip": runtime.pod_ip}]
    return status


def qos_class(spec: Obj) -> str:
    containers = [*(spec.get("initContainers") or ()), *spec["containers"]]
    requested, guaranteed = False, True
    for container in containers:
        resources = container.get("resources") or {}
        limits, requests = resources.get("limits") or {}, resources.get("requests") or {}
        if limits or requests:
            requested = True
        for resource in ("cpu", "memory"):
            asked = requests.get(resource, limits.get(resource))
            if resource not in limits or not _same(resource, asked, limits[resource]):
                guaranteed = False
    if not requested:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def _same(resource: str, a: Any, b: Any) -> bool:
    convert = millicores if resource == "cpu" else units
    return bool(convert(a) == convert(b))


def _condition(kind: str, ok: bool, reason: str = "", message: str = "") -> dict[str, Any]:
    found: dict[str, Any] = {"type": kind, "status": "True" if ok else "False"}
    if reason and (not ok or reason == "PodCompleted"):
        found["reason"] = reason
    elif not ok and message:
        found["reason"] = "ContainersNotInitialized"
    if message and not ok:
        found["message"] = message
    return found


def _ready(kind: str, unready: list[str], terminal: bool) -> dict[str, Any]:
    if terminal:
        return {"type": kind, "status": "False", "reason": "PodCompleted"}
    if not unready:
        return {"type": kind, "status": "True"}
    return {
        "type": kind,
        "status": "False",
        "reason": "ContainersNotReady",
        "message": f"containers with unready status: [{' '.join(unready)}]",
    }


def _keep_times(conditions: list[dict[str, Any]], old: Obj, now: float) -> list[dict[str, Any]]:
    before = {c.get("type"): c for c in old.get("conditions") or ()}
    kept = []
    for condition in conditions:
        previous = before.get(condition["type"])
        if condition["type"] == "PodScheduled":
            kept.append(condition)
            continue
        moment = stamp(now)
        if previous is not None and previous.get("status") == condition["status"]:
            moment = previous.get("lastTransitionTime") or moment
        kept.append({**condition, "lastProbeTime": None, "lastTransitionTime": moment})
    return kept
