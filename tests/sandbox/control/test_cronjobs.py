"""CronJob controller: Jobs on the sandbox clock's schedule, concurrency policies, missed-run
deadlines and history limits. The test plays the Job controller (marks Jobs Complete or Failed),
so only the CronJob controller acts; the schedule parser is checked on its own too."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from sandbox.clock import parse_time
from sandbox.control.cron import Schedule
from sandbox.store import Obj
from tests.support.simulation import Simulation


@pytest.fixture
def sim() -> Simulation:
    return Simulation(nodes=1, only=("cronjob-controller",))


def cronjob(schedule: str = "*/5 * * * *", name: str = "tick", **spec: Any) -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name},
        "spec": {
            "schedule": schedule,
            "jobTemplate": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "template": {
                        "spec": {
                            "restartPolicy": "OnFailure",
                            "containers": [{"name": "tick", "image": "busybox:1.36"}],
                        }
                    }
                },
            },
            **spec,
        },
    }


def jobs(sim: Simulation) -> list[Obj]:
    return sim.list("jobs", "default")


def end_job(sim: Simulation, job: Obj, outcome: str = "Complete") -> None:
    """Play the Job controller: the Job finishes."""
    now = sim.objects.clock.timestamp()
    status: dict[str, Any] = {
        "startTime": job["metadata"]["creationTimestamp"],
        "conditions": [
            {"type": outcome, "status": "True", "reason": "Test", "lastTransitionTime": now}
        ],
    }
    if outcome == "Complete":
        status["completionTime"] = now
    sim.write("jobs", {**job, "status": status}, job)


def cj_status(sim: Simulation, name: str = "tick") -> dict[str, Any]:
    found = sim.get("cronjobs", "default", name)
    assert found is not None
    return dict(found.get("status") or {})


@pytest.mark.parametrize(
    ("schedule", "after", "expected"),
    [
        ("*/5 * * * *", "2026-03-10T12:03:27Z", "2026-03-10T12:05:00Z"),
        ("@hourly", "2026-03-10T12:00:00Z", "2026-03-10T13:00:00Z"),
        ("0 9 * * MON-FRI", "2026-03-13T10:00:00Z", "2026-03-16T09:00:00Z"),
        ("30 2 1 jan *", "2026-03-10T12:00:00Z", "2027-01-01T02:30:00Z"),
        ("0 0 13 * FRI", "2026-03-10T12:00:00Z", "2026-03-13T00:00:00Z"),
        ("0 0 29 2 *", "2026-03-10T12:00:00Z", "2028-02-29T00:00:00Z"),
        ("15,45 8-10/2 * * *", "2026-03-10T08:50:00Z", "2026-03-10T10:15:00Z"),
    ],
    ids=["step", "macro", "weekday-range", "month-name", "day-or-weekday", "leap-day", "lists"],
)
def test_schedule_next_run(schedule: str, after: str, expected: str) -> None:
    found = Schedule.parse(schedule).next_after(parse_time(after))
    assert found == parse_time(expected)


def test_every_five_minutes_over_twenty_minutes_makes_four_jobs(sim: Simulation) -> None:
    sim.apply(cronjob())
    sim.run_for(20 * 60)
    made = jobs(sim)
    assert len(made) == 4
    for job in made:
        scheduled = parse_time(
            job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"]
        )
        assert scheduled.minute % 5 == 0 and scheduled.second == 0
        assert job["metadata"]["name"] == f"tick-{int(scheduled.timestamp() // 60)}"
        assert job["metadata"]["labels"] == {"app": "tick"}
        assert job["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
    status = cj_status(sim)
    assert len(status["active"]) == 4
    latest = max(
        j["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"]
        for j in made
    )
    assert status["lastScheduleTime"] == latest
    found = sim.get("cronjobs", "default", "tick")
    assert found is not None
    names = sorted(j["metadata"]["name"] for j in made)
    messages = sorted(e["message"] for e in sim.events_for(found, reason="SuccessfulCreate"))
    assert messages == [f"Created job {n}" for n in names]


def test_forbid_skips_runs_while_a_job_is_active(sim: Simulation) -> None:
    sim.apply(cronjob("* * * * *", concurrencyPolicy="Forbid"))
    sim.run_for(5 * 60)
    [running] = jobs(sim)
    found = sim.get("cronjobs", "default", "tick")
    assert found is not None
    assert sim.events_for(found, reason="JobAlreadyActive")
    end_job(sim, running)
    sim.run_for(61)
    assert len(jobs(sim)) >= 2
    status = cj_status(sim)
    assert status["lastSuccessfulTime"] == running_completion(sim, running)
    assert sim.events_for(found, reason="SawCompletedJob")


def running_completion(sim: Simulation, job: Obj) -> str:
    found = sim.get("jobs", "default", job["metadata"]["name"])
    assert found is not None
    return str(found["status"]["completionTime"])


def test_replace_deletes_the_active_job_for_the_new_one(sim: Simulation) -> None:
    sim.apply(cronjob("* * * * *", concurrencyPolicy="Replace"))
    sim.run_for(61)
    [first] = jobs(sim)
    sim.run_for(60)
    [second] = jobs(sim)
    assert second["metadata"]["name"] != first["metadata"]["name"]
    found = sim.get("cronjobs", "default", "tick")
    assert found is not None
    deleted = [e["message"] for e in sim.events_for(found, reason="SuccessfulDelete")]
    assert deleted == [f"Deleted job {first['metadata']['name']}"]


def test_history_limits_prune_finished_jobs(sim: Simulation) -> None:
    sim.apply(cronjob("* * * * *", successfulJobsHistoryLimit=2, failedJobsHistoryLimit=1))
    for minute in range(6):
        sim.run_for(60)
        for job in jobs(sim):
            if not (job.get("status") or {}).get("conditions"):
                end_job(sim, job, "Failed" if minute in (1, 3) else "Complete")
    sim.run_for(1)
    outcomes = sorted(j["status"]["conditions"][0]["type"] for j in jobs(sim))
    assert outcomes == ["Complete", "Complete", "Failed"]
    assert "active" not in cj_status(sim)


def test_suspended_cronjob_creates_nothing(sim: Simulation) -> None:
    sim.apply(cronjob("* * * * *", suspend=True))
    sim.run_for(5 * 60)
    assert jobs(sim) == []


def test_starting_deadline_skips_runs_missed_for_too_long(sim: Simulation) -> None:
    sim.apply(cronjob("0 * * * *", startingDeadlineSeconds=30, suspend=True))
    now = sim.objects.clock.now()
    sim.run_for(3600 - now.minute * 60 - now.second + 90)  # 90 s past the hour
    sim.patch("cronjobs", "default", "tick", {"spec": {"suspend": False}})
    assert jobs(sim) == []  # the top of the hour is more than 30 s ago


def test_time_zone_shifts_the_schedule(sim: Simulation) -> None:
    sim.apply(cronjob("0 * * * *", timeZone="Asia/Kolkata"))  # UTC+05:30
    sim.run_for(3600)
    [job] = jobs(sim)
    stamp = job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"]
    assert stamp.endswith("+05:30")
    assert parse_time(stamp).astimezone(UTC).minute == 30
    assert datetime.fromisoformat(stamp).minute == 0
