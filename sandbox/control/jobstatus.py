"""What a Job's status and its pods say: whether the Job is over, when, which indexes completed,
and how each of its pods ended.

Shared by the Job controller (`jobs.py`, `jobruns.py`) and the CronJob controller, which reads
`finished` and nothing else. `pod_outcome` follows the job controller's rules: a pod's phase
once it is Succeeded or Failed, and Failed for a terminating pod past its grace period. Plain
functions of API objects: no store, no clock (the moment is handed in).
"""

from __future__ import annotations

from sandbox.clock import parse_time
from sandbox.store import Key, Obj

JOBS: Key = ("batch", "jobs")
TRACKING = "batch.kubernetes.io/job-tracking"
INDEX = "batch.kubernetes.io/job-completion-index"


# -- pod facts -------------------------------------------------------------------------------------


def finalizers(pod: Obj) -> list[str]:
    return list(pod["metadata"].get("finalizers") or [])


def pod_phase(pod: Obj) -> str:
    return str((pod.get("status") or {}).get("phase", ""))


def deleting(pod: Obj) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


def pod_outcome(pod: Obj, now: float) -> str | None:
    """ "Succeeded"/"Failed" once the pod is done (a terminating pod past its grace period
    counts as failed), None while it runs."""
    phase = pod_phase(pod)
    if phase in ("Succeeded", "Failed"):
        return phase
    stamp = pod["metadata"].get("deletionTimestamp")
    if stamp and parse_time(stamp).timestamp() <= now:
        return "Failed"
    return None


def completion_index(pod: Obj) -> int | None:
    value = (pod["metadata"].get("annotations") or {}).get(INDEX)
    return int(value) if isinstance(value, str) and value.isdigit() else None


def finished_at(pod: Obj) -> float:
    latest = 0.0
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        stamp = ((status.get("state") or {}).get("terminated") or {}).get("finishedAt")
        if stamp:
            latest = max(latest, parse_time(stamp).timestamp())
    return latest


# -- job facts -------------------------------------------------------------------------------------


def job_condition(conditions: list[Obj], kind: str) -> Obj | None:
    return next((c for c in conditions if c.get("type") == kind), None)


def has_condition(conditions: list[Obj], kind: str) -> bool:
    found = job_condition(conditions, kind)
    return found is not None and found.get("status") == "True"


def finished(job: Obj) -> str | None:
    """ "Complete" or "Failed" once the Job is over, else None."""
    conditions = (job.get("status") or {}).get("conditions") or []
    for kind in ("Complete", "Failed"):
        if has_condition(conditions, kind):
            return kind
    return None


def finish_time(job: Obj) -> float:
    status = job.get("status") or {}
    if status.get("completionTime"):
        return parse_time(status["completionTime"]).timestamp()
    found = job_condition(status.get("conditions") or [], "Failed")
    stamp = (found or {}).get("lastTransitionTime")
    return parse_time(stamp).timestamp() if stamp else 0.0


def parse_indexes(text: str) -> set[int]:
    """ "0-2,5" -> {0, 1, 2, 5} (the form of status.completedIndexes)."""
    found: set[int] = set()
    for part in filter(None, (text or "").split(",")):
        low, _, high = part.partition("-")
        found.update(range(int(low), int(high or low) + 1))
    return found


def format_indexes(indexes: set[int]) -> str:
    parts: list[str] = []
    run: list[int] = []
    for index in sorted(indexes):
        if run and index != run[-1] + 1:
            parts.append(_span(run))
            run = []
        run.append(index)
    if run:
        parts.append(_span(run))
    return ",".join(parts)


def _span(run: list[int]) -> str:
    return str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}"
