"""The CronJob controller: Jobs on a schedule of the sandbox clock.

Each look finds the most recent scheduled time since the last run (`status.lastScheduleTime`,
or the CronJob's creation) that is not past `startingDeadlineSeconds`, and starts a Job
`<cronjob>-<scheduled minutes since the epoch>` for it unless `concurrencyPolicy` says otherwise
(Forbid: skip while one is active, which starts it late once the active one ends if the deadline
allows, as in Kubernetes; Replace: delete the active ones first). It then asks to look again at
the next scheduled time: nothing scans on every tick. Finished Jobs leave `status.active`, move
`lastSuccessfulTime`, and are pruned to `successfulJobsHistoryLimit` / `failedJobsHistoryLimit`.

It reads Jobs only through their conditions; running them is the Job controller's business.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sandbox.clock import format_time, parse_time
from sandbox.control.cron import Schedule
from sandbox.control.jobstatus import JOBS, finished
from sandbox.control.ownership import controller_ref, controller_uid
from sandbox.control.runtime import Controller
from sandbox.errors import ApiError
from sandbox.jsoncopy import deep_copy
from sandbox.store import Key, Obj

CRONJOBS: Key = ("batch", "cronjobs")
SCHEDULED = "batch.kubernetes.io/cronjob-scheduled-timestamp"
MAX_MISSED = 100
_MARGIN = 0.01  # look just after the scheduled second, never just before it


class CronJobController(Controller):
    name = "cronjob-controller"
    primary = CRONJOBS
    watches = (JOBS,)

    def reconcile(self, namespace: str, name: str) -> float | None:
        cj = self.get(CRONJOBS, namespace, name)
        if cj is None or cj["metadata"].get("deletionTimestamp"):
            return None
        schedule, zone = self._schedule(cj)
        jobs = self._jobs(cj)
        status = self._observe(cj, jobs)
        self._prune(cj, jobs)
        if schedule is None or zone is None or cj["spec"].get("suspend"):
            self.write_status(CRONJOBS, cj, status)
            return None
        now = self.ctx.clock.now().astimezone(zone)
        due = self._most_recent(cj, schedule, now)
        if due is not None:
            status = self._run(cj, status, due, now)
        self.write_status(CRONJOBS, cj, status)
        upcoming = schedule.next_after(now)
        return (upcoming - now).total_seconds() + _MARGIN

    # -- reading -------------------------------------------------------------------------------

    def _schedule(self, cj: Obj) -> tuple[Schedule | None, ZoneInfo | None]:
        spec = cj["spec"]
        zone_name = spec.get("timeZone")
        try:
            zone = ZoneInfo(zone_name) if zone_name else ZoneInfo("UTC")
        except (ZoneInfoNotFoundError, ValueError):
            self.event(cj, "UnknownTimeZone", f"invalid timeZone: {zone_name!r}", warning=True)
            return None, None
        try:
            return Schedule.parse(str(spec.get("schedule", ""))), zone
        except ValueError as err:
            message = f"invalid schedule: {spec.get('schedule')} : {err}"
            self.event(cj, "InvalidSchedule", message, warning=True)
            return None, zone

    def _jobs(self, cj: Obj) -> list[Obj]:
        uid = cj["metadata"]["uid"]
        return [j for j in self.ctx.index.owned(JOBS, uid) if controller_uid(j) == uid]

    def _observe(self, cj: Obj, jobs: list[Obj]) -> dict[str, Any]:
        """Status from the Jobs as they are: active refs, the last success."""
        status = dict(cj.get("status") or {})
        was_active = {ref.get("uid"): ref for ref in status.get("active") or []}
        active = []
        for job in jobs:
            outcome = finished(job)
            if outcome is None:
                active.append(was_active.get(job["metadata"]["uid"]) or _ref(job))
                continue
            if job["metadata"]["uid"] in was_active:
                message = f"Saw completed job: {job['metadata']['name']}, condition: {outcome}"
                self.event(cj, "SawCompletedJob", message)
            done = (job.get("status") or {}).get("completionTime")
            if outcome == "Complete" and done and done > status.get("lastSuccessfulTime", ""):
                status["lastSuccessfulTime"] = done
        if active:
            status["active"] = active
        else:
            status.pop("active", None)
        return status

    def _prune(self, cj: Obj, jobs: list[Obj]) -> None:
        spec = cj["spec"]
        for outcome, field in (
            ("Complete", "successfulJobsHistoryLimit"),
            ("Failed", "failedJobsHistoryLimit"),
        ):
            limit = spec.get(field)
            if limit is None:
                continue
            done = sorted((j for j in jobs if finished(j) == outcome), key=_started)
            for job in done[: max(len(done) - int(limit), 0)]:
                self._delete_job(cj, job)

    def _most_recent(self, cj: Obj, schedule: Schedule, now: datetime) -> datetime | None:
        """The latest scheduled time in (last run, now], or None."""
        status = cj.get("status") or {}
        since = parse_time(status.get("lastScheduleTime") or cj["metadata"]["creationTimestamp"])
        deadline = cj["spec"].get("startingDeadlineSeconds")
        if deadline is not None:
            since = max(since, now - timedelta(seconds=int(deadline)))
        since = since.astimezone(now.tzinfo)
        found, missed, warned = None, 0, False
        moment = schedule.next_after(since)
        while moment <= now:
            found, missed = moment, missed + 1
            if missed > MAX_MISSED and not warned:
                self.event(
                    cj,
                    "TooManyMissedTimes",
                    "too many missed start times. Set or decrease .spec.startingDeadlineSeconds "
                    "or check clock skew",
                    warning=True,
                )
                warned = True
                moment = max(moment, now - timedelta(days=1))  # only the latest one matters
            moment = schedule.next_after(moment)
        return found

    # -- acting --------------------------------------------------------------------------------

    def _run(self, cj: Obj, status: dict[str, Any], due: datetime, now: datetime) -> dict[str, Any]:
        name = f"{cj['metadata']['name']}-{int(due.timestamp() // 60)}"
        namespace = cj["metadata"]["namespace"]
        if self.get(JOBS, namespace, name) is not None:
            return status
        policy = cj["spec"].get("concurrencyPolicy", "Allow")
        active = [self.get(JOBS, namespace, ref["name"]) for ref in status.get("active") or []]
        running = [job for job in active if job is not None]
        if running and policy == "Forbid":
            self.event(
                cj,
                "JobAlreadyActive",
                "Not starting job because prior execution is running and concurrency policy "
                "is Forbid",
            )
            return status
        if running and policy == "Replace":
            for job in running:
                self._delete_job(cj, job)
            status.pop("active", None)
        try:
            job = self.create(JOBS, _job_for(cj, name, due))
        except ApiError as err:
            self.event(cj, "FailedCreate", f"Error creating job: {err}", warning=True)
            return status
        self.event(cj, "SuccessfulCreate", f"Created job {name}")
        return {
            **status,
            "active": [*(status.get("active") or []), _ref(job)],
            "lastScheduleTime": format_time(due),
        }

    def _delete_job(self, cj: Obj, job: Obj) -> None:
        meta = job["metadata"]
        self.delete(JOBS, meta["namespace"], meta["name"])
        self.event(cj, "SuccessfulDelete", f"Deleted job {meta['name']}")


def _job_for(cj: Obj, name: str, due: datetime) -> Obj:
    template = cj["spec"].get("jobTemplate") or {}
    t_meta = template.get("metadata") or {}
    stamp = due.isoformat().replace("+00:00", "Z")
    meta: dict[str, Any] = {
        "name": name,
        "namespace": cj["metadata"]["namespace"],
        "annotations": {**(t_meta.get("annotations") or {}), SCHEDULED: stamp},
        "ownerReferences": [controller_ref(cj)],
    }
    if t_meta.get("labels"):
        meta["labels"] = dict(t_meta["labels"])
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta,
        "spec": deep_copy(template.get("spec") or {}),
    }


def _ref(job: Obj) -> dict[str, Any]:
    meta = job["metadata"]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "name": meta["name"],
        "namespace": meta["namespace"],
        "resourceVersion": meta.get("resourceVersion", ""),
        "uid": meta["uid"],
    }


def _started(job: Obj) -> datetime:
    stamp = (job.get("status") or {}).get("startTime") or job["metadata"]["creationTimestamp"]
    return parse_time(stamp).astimezone(UTC)


CONTROLLERS: tuple[type[Controller], ...] = (CronJobController,)
