"""One pass over an unfinished Job (`JobRun`): decide its fate, then start or stop pods.

The order is the job controller's: suspend (delete the running pods) or resume; a Job already
marked FailureTarget or SuccessCriteriaMet only waits for its pods to go; more than
`backoffLimit` failures or `activeDeadlineSeconds` passed fail it; enough successes complete it;
otherwise pods are created or deleted towards `parallelism` (per index for Indexed Jobs), after
the exponential backoff (10 s doubling, at most 6 min) since the last failure. Conditions and
status are built here; the controller (`jobs.py`) writes them.

A pass knows its controller only as `JobPods`, what it asks of it: the clock, events, and the
Job's pods to list, create and delete. `jobs.JobController` is one; this module does not import it.
"""

from __future__ import annotations

import random
from typing import Any, Protocol

from sandbox.clock import format_time, parse_time
from sandbox.control.jobstatus import (
    INDEX,
    TRACKING,
    completion_index,
    deleting,
    finished_at,
    format_indexes,
    has_condition,
    job_condition,
    parse_indexes,
    pod_outcome,
    pod_phase,
)
from sandbox.control.ownership import controller_ref
from sandbox.control.readiness import ready_to_count
from sandbox.control.runtime import PODS, Context
from sandbox.jsoncopy import deep_copy
from sandbox.naming import random_suffix
from sandbox.store import Key, Obj

BACKOFF_BASE, BACKOFF_MAX = 10.0, 360.0

REASONS = {
    "BackoffLimitExceeded": "Job has reached the specified backoff limit",
    "DeadlineExceeded": "Job was active longer than specified deadline",
    "CompletionsReached": "Reached expected number of succeeded pods",
}


class JobPods(Protocol):
    """What a pass needs of the Job controller."""

    ctx: Context

    def now(self) -> float: ...

    def random(self, *parts: object) -> random.Random: ...

    def event(self, obj: Obj, reason: str, message: str, *, warning: bool = False) -> None: ...

    def get(self, key: Key, namespace: str, name: str) -> Obj | None: ...

    def create(self, key: Key, obj: Obj) -> Obj: ...

    def pods_of(self, job: Obj) -> list[Obj]: ...

    def delete_pod(self, job: Obj, pod: Obj) -> None: ...  # releases its tracking finalizer


class JobRun:
    """One pass over an unfinished Job."""

    def __init__(self, ctl: JobPods, job: Obj, pods: list[Obj]) -> None:
        self.ctl, self.job, self.pods = ctl, job, pods
        self.spec = job["spec"]
        self.now = ctl.now()
        self.old = dict(job.get("status") or {})
        self.conditions: list[Obj] = list(self.old.get("conditions") or [])
        self.start = self.old.get("startTime")
        self.indexed = self.spec.get("completionMode") == "Indexed"
        self.completed = parse_indexes(self.old.get("completedIndexes", ""))
        self.succeeded = int(self.old.get("succeeded") or 0)
        self.failed = int(self.old.get("failed") or 0)
        self.completion_time: str | None = self.old.get("completionTime")

    def active(self) -> list[Obj]:
        return [p for p in self.pods if pod_outcome(p, self.now) is None and not deleting(p)]

    def step(self) -> float | None:
        if self.spec.get("suspend"):
            self._suspend()
            return None
        self._resume()
        if any(has_condition(self.conditions, k) for k in ("FailureTarget", "SuccessCriteriaMet")):
            self._stop_all()
            return self._finish_when_quiet()
        if self.start is None:
            self.start = format_time(self.ctl.ctx.clock.now())
        if self.failed > int(self.spec.get("backoffLimit", 6)):
            return self._fail("BackoffLimitExceeded")
        deadline = self.spec.get("activeDeadlineSeconds")
        left = None
        if deadline is not None:
            left = parse_time(self.start).timestamp() + int(deadline) - self.now
            if left <= 0:
                return self._fail("DeadlineExceeded")
        if self._succeeded_enough():
            self._set("SuccessCriteriaMet", "CompletionsReached")
            self._stop_all()
            return self._finish_when_quiet()
        backoff = self._backoff_left()
        wait: float | None = backoff if backoff > 0 else None
        if wait is None:
            self._scale()
        return earliest(left, wait)

    # -- decisions -----------------------------------------------------------------------------

    def _succeeded_enough(self) -> bool:
        completions = self.spec.get("completions")
        if self.indexed:
            return len(self.completed) >= int(completions or 0)
        if completions is None:
            return self.succeeded > 0 and not self.active()
        return self.succeeded >= int(completions)

    def _fail(self, reason: str) -> float | None:
        self._set("FailureTarget", reason)
        self.ctl.event(self.job, reason, REASONS[reason], warning=True)
        self._stop_all()
        return self._finish_when_quiet()

    def _finish_when_quiet(self) -> float | None:
        if any(deleting(p) and pod_outcome(p, self.now) is None for p in self.pods):
            return None  # the pods' changes wake us when they are gone
        target = job_condition(self.conditions, "FailureTarget")
        if target is not None:
            self._set("Failed", target["reason"])
            return None
        self._set("Complete", "CompletionsReached")
        self.ctl.event(self.job, "Completed", "Job completed")
        return None

    def _suspend(self) -> None:
        self._stop_all()
        if not has_condition(self.conditions, "Suspended"):
            self._set("Suspended", "JobSuspended", message="Job suspended")
            self.ctl.event(self.job, "Suspended", "Job suspended")

    def _resume(self) -> None:
        if has_condition(self.conditions, "Suspended"):
            self._set("Suspended", "JobResumed", message="Job resumed", status="False")
            self.ctl.event(self.job, "Resumed", "Job resumed")
            self.start = format_time(self.ctl.ctx.clock.now())

    def _stop_all(self) -> None:
        for pod in self.active():
            self.ctl.delete_pod(self.job, pod)
        self.pods = self.ctl.pods_of(self.job)

    def _backoff_left(self) -> float:
        if not self.failed:
            return 0.0
        last = max((finished_at(p) for p in self.pods if pod_phase(p) == "Failed"), default=0.0)
        if not last:
            return 0.0
        delay = min(BACKOFF_BASE * 2.0 ** (self.failed - 1), BACKOFF_MAX)
        return float(last + delay - self.now)

    # -- pods ----------------------------------------------------------------------------------

    def _scale(self) -> None:
        parallelism = int(self.spec.get("parallelism", 1))
        active = self.active()
        if self.indexed:
            self._scale_indexed(parallelism, active)
            return
        completions = self.spec.get("completions")
        if completions is None:
            want = 0 if self.succeeded else parallelism
        else:
            want = max(min(parallelism, int(completions) - self.succeeded), 0)
        for _ in range(want - len(active)):
            self._create(None)
        surplus = sorted(active, key=lambda p: (ready_to_count(p), p["metadata"]["name"]))
        for pod in surplus[: max(len(active) - want, 0)]:
            self.ctl.delete_pod(self.job, pod)

    def _scale_indexed(self, parallelism: int, active: list[Obj]) -> None:
        running: set[int] = set()
        for pod in active:
            index = completion_index(pod)
            if index is None or index in running or index in self.completed:
                self.ctl.delete_pod(self.job, pod)
            else:
                running.add(index)
        completions = int(self.spec.get("completions") or 0)
        todo = [i for i in range(completions) if i not in self.completed and i not in running]
        for index in todo[: max(parallelism - len(running), 0)]:
            self._create(index)

    def _create(self, index: int | None) -> None:
        meta = self.job["metadata"]
        template = self.spec.get("template") or {}
        t_meta = template.get("metadata") or {}
        labels = dict(t_meta.get("labels") or {})
        annotations = dict(t_meta.get("annotations") or {})
        spec = deep_copy(template.get("spec") or {})
        prefix = f"{meta['name']}-"
        if index is not None:
            labels[INDEX] = annotations[INDEX] = str(index)
            prefix = f"{meta['name']}-{index}-"
            spec["hostname"] = f"{meta['name']}-{index}"
            _add_index_env(spec)
        pod_meta: dict[str, Any] = {
            "name": self._free_name(prefix),
            "namespace": meta["namespace"],
            "labels": labels,
            "ownerReferences": [controller_ref(self.job)],
            "finalizers": [TRACKING],
        }
        if annotations:
            pod_meta["annotations"] = annotations
        pod = self.ctl.create(
            PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": spec}
        )
        self.pods.append(pod)
        self.ctl.event(self.job, "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}")

    def _free_name(self, prefix: str) -> str:
        meta = self.job["metadata"]
        rng = self.ctl.random(
            meta["namespace"],
            meta["name"],
            meta.get("creationTimestamp"),
            prefix,
            self.succeeded,
            self.failed,
            len(self.pods),
        )
        while True:
            name = prefix + random_suffix(rng)
            if self.ctl.get(PODS, meta["namespace"], name) is None:
                return name

    # -- status --------------------------------------------------------------------------------

    def _set(self, kind: str, reason: str, *, message: str = "", status: str = "True") -> None:
        stamp = format_time(self.ctl.ctx.clock.now())
        found = job_condition(self.conditions, kind)
        if found is not None and found["status"] == status and found["reason"] == reason:
            return
        condition = {
            "type": kind,
            "status": status,
            "reason": reason,
            "message": message or REASONS.get(reason, ""),
            "lastProbeTime": stamp,
            "lastTransitionTime": stamp,
        }
        self.conditions = [c for c in self.conditions if c["type"] != kind] + [condition]
        if kind == "Complete":
            self.completion_time = stamp

    def status(self) -> dict[str, Any]:
        active = self.active()
        status: dict[str, Any] = {}
        if self.completion_time:
            status["completionTime"] = self.completion_time
        if self.conditions:
            status["conditions"] = self.conditions
        if self.start is not None:
            status["startTime"] = self.start
        status["active"] = len(active)
        status["ready"] = sum(1 for p in active if ready_to_count(p))
        status["terminating"] = sum(
            1 for p in self.pods if deleting(p) and pod_outcome(p, self.now) is None
        )
        status["succeeded"], status["failed"] = self.succeeded, self.failed
        for omitted in ("active", "succeeded", "failed"):
            if not status[omitted]:
                del status[omitted]
        if self.indexed and self.completed:
            status["completedIndexes"] = format_indexes(self.completed)
        status["uncountedTerminatedPods"] = {}
        return status


def earliest(*delays: float | None) -> float | None:
    return min((d for d in delays if d is not None), default=None)


def _add_index_env(spec: Obj) -> None:
    variable = {
        "name": "JOB_COMPLETION_INDEX",
        "valueFrom": {"fieldRef": {"fieldPath": f"metadata.annotations['{INDEX}']"}},
    }
    for field in ("initContainers", "containers"):
        for container in spec.get(field) or []:
            env = [e for e in container.get("env") or [] if e.get("name") != variable["name"]]
            container["env"] = [*env, deep_copy(variable)]
