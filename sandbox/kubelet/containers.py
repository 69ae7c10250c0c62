"""The kubelet's memory of each container (`Run`) and of each pod (`PodRuntime`), and how a run
reads in `status.containerStatuses`.

A real kubelet keeps container state in the runtime (containerd) and its own caches, and only
reports it through the pod status; the sandbox does the same with these records. A `Run` is in
one `Phase` at a time and knows `due`, the sandbox time its phase ends (a pull finishes, a
backoff is over); the pod controller moves it along and sets a timer for the earliest `due`.
When the sandbox restarts, `rebuild` recreates the records from the status it wrote before.
This module knows the status format and the clock's time format; it makes no decisions.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, Literal

from sandbox.clock import format_time, parse_time
from sandbox.kubelet.commands import Plan
from sandbox.kubelet.probes import Outcome
from sandbox.store import Obj

Phase = Literal[
    "pull",  # about to pull (or find) the image
    "pulling",  # pulling; `due` when it finishes
    "pull-failed",  # the pull will fail at `due`
    "pull-error",  # ErrImagePull shown until `due`, then ImagePullBackOff
    "pull-backoff",  # ImagePullBackOff until `due`
    "create",  # image present: create and start the container
    "config-error",  # CreateContainerConfigError; retry at `due`
    "running",
    "exited",  # just terminated: decide about a restart
    "crash-backoff",  # CrashLoopBackOff until `due`
    "done",  # terminated for good
]
NEVER = math.inf


@dataclass
class Run:
    name: str
    init: bool = False
    sidecar: bool = False
    phase: Phase = "pull"
    due: float = 0.0
    image: str = ""  # the spec image this run pulled (a change restarts the container)
    status_image: str = ""
    image_id: str = ""
    container_id: str = ""
    waiting: tuple[str, str] = ("ContainerCreating", "")  # (reason, message)
    started_at: float = 0.0
    finished_at: float = 0.0
    exit_code: int = 0
    term_reason: str = ""
    term_message: str = ""
    last: dict[str, Any] | None = None  # lastState.terminated
    restarts: int = 0
    crash_backoff: float = 0.0  # the next CrashLoopBackOff length (0: restart at once)
    last_restart: float = 0.0
    pull_backoff: float = 0.0
    pull_error: str = ""
    pull_started: float = 0.0
    epoch: float = 0.0  # since when the probes' answers are what `probe_sig` says
    probe_sig: tuple[tuple[str, Outcome], ...] = ()
    ready_at_epoch: bool = False
    next_probe: float = NEVER  # the next moment a probe changes something (or fails again)
    probes_seen: float = 0.0  # Unhealthy events were written for probes up to this time
    ready: bool = False
    started: bool = False
    logged: float = 0.0  # script output written up to this age of the container
    log_seq: int = 0  # which profile log line comes next
    # What this start of the container's command does, fixed when it started: its network
    # tools met the cluster as it was then (None: not started by this kubelet process yet).
    plan: Plan | None = None

    @property
    def field_path(self) -> str:
        return f"spec.{'initContainers' if self.init else 'containers'}{{{self.name}}}"

    def terminated(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "exitCode": self.exit_code,
            "reason": self.term_reason,
            "startedAt": stamp(self.started_at),
            "finishedAt": stamp(self.finished_at),
            "containerID": self.container_id,
        }
        if self.term_message:
            found["message"] = self.term_message
        return found

    def status(self, spec_image: str) -> dict[str, Any]:
        if self.phase == "running":
            state: dict[str, Any] = {"running": {"startedAt": stamp(self.started_at)}}
        elif self.phase in ("exited", "done"):
            state = {"terminated": self.terminated()}
        else:
            reason, message = self.waiting
            state = {"waiting": {"reason": reason, **({"message": message} if message else {})}}
        entry: dict[str, Any] = {
            "name": self.name,
            "state": state,
            "lastState": {"terminated": self.last} if self.last else {},
            "ready": self.ready,
            "restartCount": self.restarts,
            "image": self.status_image or spec_image,
            "imageID": self.image_id,
            "started": self.phase == "running" and self.started,
        }
        if self.container_id:
            entry["containerID"] = self.container_id
        return entry


@dataclass
class PodRuntime:
    uid: str
    node: str
    pod_ip: str
    start_time: float
    runs: dict[str, Run] = field(default_factory=dict)
    mounted: bool = False
    mount_backoff: float = 0.0
    mount_due: float = 0.0
    killing_until: float | None = None


def container_id(uid: str, name: str, restarts: int) -> str:
    digest = hashlib.sha256(f"{uid}:{name}:{restarts}".encode()).hexdigest()
    return f"containerd://{digest}"


@lru_cache(maxsize=65536)
def stamp(seconds: float) -> str:
    return format_time(datetime.fromtimestamp(seconds, UTC))


def seconds_of(text: str | None) -> float:
    return parse_time(text).timestamp() if text else 0.0


def rebuild(pod: Obj, node: str, now: float) -> PodRuntime:
    """Records for a pod this kubelet ran before the sandbox restarted, from its status."""
    status = pod.get("status") or {}
    spec = pod.get("spec") or {}
    runtime = PodRuntime(
        uid=pod["metadata"]["uid"],
        node=node,
        pod_ip=str(status.get("podIP") or ""),
        start_time=seconds_of(status.get("startTime")) or now,
    )
    known = {
        entry.get("name"): entry
        for entry in [
            *(status.get("initContainerStatuses") or ()),
            *(status.get("containerStatuses") or ()),
        ]
    }
    for init, containers in ((True, spec.get("initContainers") or ()), (False, spec["containers"])):
        for container in containers:
            run = Run(
                container["name"],
                init=init,
                sidecar=init and container.get("restartPolicy") == "Always",
                image=str(container.get("image") or ""),
            )
            runtime.runs[run.name] = run
            entry = known.get(run.name)
            if entry is None:
                continue
            run.restarts = int(entry.get("restartCount") or 0)
            run.container_id = str(entry.get("containerID") or "")
            run.image_id = str(entry.get("imageID") or "")
            run.status_image = str(entry.get("image") or "") if run.image_id else ""
            run.last = (entry.get("lastState") or {}).get("terminated")
            state = entry.get("state") or {}
            if "running" in state:
                run.phase, run.due = "running", now
                run.started_at = seconds_of(state["running"].get("startedAt"))
                run.epoch, run.probes_seen, run.logged = now, now, now - run.started_at
                runtime.mounted = True
            elif "terminated" in state:
                done = state["terminated"]
                run.phase, run.due = "exited", now
                run.exit_code = int(done.get("exitCode") or 0)
                run.term_reason = str(done.get("reason") or "")
                run.term_message = str(done.get("message") or "")
                run.started_at = seconds_of(done.get("startedAt"))
                run.finished_at = seconds_of(done.get("finishedAt"))
                runtime.mounted = True
    return runtime
