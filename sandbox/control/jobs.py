"""The Job controller: run pods until enough of them succeed, or give up.

A Job keeps `parallelism` pods running until `completions` of them have succeeded (NonIndexed),
or until every index 0..completions-1 has a succeeded pod (Indexed: each pod carries its index
in the `batch.kubernetes.io/job-completion-index` annotation and label, a `<job>-<index>`
hostname and a JOB_COMPLETION_INDEX variable). Without `completions` it is a work queue: it is
done once one pod has succeeded and none is left running. Failed pods are replaced after an
exponential backoff (10 s doubling, at most 6 min) until more than `backoffLimit` have failed;
`activeDeadlineSeconds` bounds the whole run; `suspend` deletes the running pods and waits;
`ttlSecondsAfterFinished` deletes a finished Job. Those decisions are one `JobRun`
(`jobruns.py`); this module owns the pods, counts them and cleans up after the end.

Counting follows Kubernetes' finalizer-based tracking: pods are created with the
`batch.kubernetes.io/job-tracking` finalizer; a finished pod is first recorded in
`status.uncountedTerminatedPods`, then loses its finalizer, then moves into `succeeded`/`failed`,
so a pod that disappears (a node eviction, a `kubectl delete`) is still counted exactly once.
A terminating pod whose grace period is over counts as failed.

The selector (`batch.kubernetes.io/controller-uid`) and the matching template labels are the
API's to generate at creation (`sandbox/defaults.py`), as Kubernetes' Job strategy does.
"""

from __future__ import annotations

from sandbox.clock import parse_time
from sandbox.control.jobruns import JobRun, earliest
from sandbox.control.jobstatus import (
    JOBS,
    TRACKING,
    completion_index,
    finalizers,
    finish_time,
    finished,
    format_indexes,
    parse_indexes,
    pod_outcome,
)
from sandbox.control.ownership import controller_uid
from sandbox.control.runtime import PODS, Controller
from sandbox.store import Obj


class JobController(Controller):
    name = "job-controller"
    primary = JOBS
    watches = (PODS,)

    def reconcile(self, namespace: str, name: str) -> float | None:
        job = self.get(JOBS, namespace, name)
        if job is None or job["metadata"].get("deletionTimestamp"):
            self._release_orphans(namespace, name)
            return None
        if not job["spec"].get("selector"):
            return None  # selects nothing: the API gives every Job a selector at creation
        pods = self.pods_of(job)
        job = self._count_finished(job, pods)
        pods = self.pods_of(job)
        if finished(job):
            return self._after_finish(job, pods)
        run = JobRun(self, job, pods)
        again = run.step()
        self.write_status(JOBS, job, run.status())
        return earliest(again, self._grace_left(run.pods))

    def _grace_left(self, pods: list[Obj]) -> float | None:
        """Seconds until a tracked terminating pod's grace period ends (it then counts)."""
        now, left = self.now(), []
        for pod in pods:
            stamp = pod["metadata"].get("deletionTimestamp")
            if stamp and TRACKING in finalizers(pod) and pod_outcome(pod, now) is None:
                left.append(parse_time(stamp).timestamp() - now)
        return max(min(left), 0.1) if left else None

    # -- ownership -----------------------------------------------------------------------------

    def pods_of(self, job: Obj) -> list[Obj]:
        uid = job["metadata"]["uid"]
        return [p for p in self.ctx.index.owned(PODS, uid) if controller_uid(p) == uid]

    def _release_orphans(self, namespace: str, name: str) -> None:
        """Pods of a deleted Job keep no tracking finalizer: nobody would count them now."""
        for pod in self.list(PODS, namespace):
            labels = pod["metadata"].get("labels") or {}
            if labels.get("job-name") == name and TRACKING in finalizers(pod):
                self.release(pod)

    def release(self, pod: Obj) -> Obj:
        kept = [f for f in finalizers(pod) if f != TRACKING]
        meta = {**pod["metadata"], "finalizers": kept}
        if not kept:
            del meta["finalizers"]
        return self.write(PODS, {**pod, "metadata": meta}, pod)

    def delete_pod(self, job: Obj, pod: Obj) -> None:
        if TRACKING in finalizers(pod):
            pod = self.release(pod)
        if not pod["metadata"].get("deletionTimestamp"):
            self.delete(PODS, pod["metadata"]["namespace"], pod["metadata"]["name"])
            self.event(job, "SuccessfulDelete", f"Deleted pod: {pod['metadata']['name']}")

    # -- counting ------------------------------------------------------------------------------

    def _count_finished(self, job: Obj, pods: list[Obj]) -> Obj:
        """Move finished pods into succeeded/failed through uncountedTerminatedPods."""
        status = dict(job.get("status") or {})
        uncounted = status.get("uncountedTerminatedPods") or {}
        succeeded = list(uncounted.get("succeeded") or [])
        failed = list(uncounted.get("failed") or [])
        completed = parse_indexes(status.get("completedIndexes", ""))
        now = self.now()
        fresh = False
        for pod in pods:
            uid = pod["metadata"]["uid"]
            outcome = pod_outcome(pod, now)
            if TRACKING not in finalizers(pod) or outcome is None or uid in succeeded + failed:
                continue
            fresh = True
            (succeeded if outcome == "Succeeded" else failed).append(uid)
            index = completion_index(pod)
            if outcome == "Succeeded" and index is not None:
                completed.add(index)
        if not succeeded and not failed:
            return job
        if fresh:
            status["uncountedTerminatedPods"] = {
                k: v for k, v in (("succeeded", succeeded), ("failed", failed)) if v
            }
            if job["spec"].get("completionMode") == "Indexed":
                status["completedIndexes"] = format_indexes(completed)
            job = self.write_status(JOBS, job, status)
        waiting = set(succeeded + failed)
        for pod in pods:
            if pod["metadata"]["uid"] in waiting and TRACKING in finalizers(pod):
                self.release(pod)
        status = {**status, "uncountedTerminatedPods": {}}
        status["succeeded"] = int(status.get("succeeded") or 0) + len(succeeded)
        status["failed"] = int(status.get("failed") or 0) + len(failed)
        return self.write_status(JOBS, job, status)

    # -- after the end -------------------------------------------------------------------------

    def _after_finish(self, job: Obj, pods: list[Obj]) -> float | None:
        for pod in pods:
            if TRACKING in finalizers(pod):
                self.release(pod)
        ttl = job["spec"].get("ttlSecondsAfterFinished")
        if ttl is None:
            return None
        left = finish_time(job) + int(ttl) - self.now()
        if left > 0:
            return left
        meta = job["metadata"]
        self.delete(JOBS, meta["namespace"], meta["name"])
        return None


CONTROLLERS: tuple[type[Controller], ...] = (JobController,)
