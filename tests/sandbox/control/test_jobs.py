"""Job controller: completions with parallelism, backoffLimit, Indexed mode, deadlines, suspend,
TTL and finalizer-based counting. The test plays the kubelet (pods run, then succeed or fail)."""

from __future__ import annotations

from typing import Any

import pytest

from sandbox.store import Obj
from tests.support.simulation import Simulation, condition

TRACKING = "batch.kubernetes.io/job-tracking"


@pytest.fixture
def sim() -> Simulation:
    return Simulation(nodes=2, only=("job-controller",))


def job(name: str = "pi", **spec: Any) -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "pi", "image": "busybox:1.36"}],
                }
            },
            **spec,
        },
    }


def active_pods(sim: Simulation, name: str = "pi") -> list[Obj]:
    return [
        p
        for p in sim.pods(**{"job-name": name})
        if not p["metadata"].get("deletionTimestamp")
        and p.get("status", {}).get("phase") not in ("Succeeded", "Failed")
    ]


def finish(sim: Simulation, pod: Obj, phase: str = "Succeeded") -> None:
    """Play the kubelet: the pod's only container exits (0 for Succeeded, 1 for Failed)."""
    now = sim.objects.clock.timestamp()
    terminated = {"exitCode": 0 if phase == "Succeeded" else 1, "finishedAt": now}
    status = {
        "phase": phase,
        "containerStatuses": [{"name": "pi", "state": {"terminated": terminated}}],
    }
    spec = {**pod["spec"], "nodeName": pod["spec"].get("nodeName") or "node-1"}
    sim.write("pods", {**pod, "spec": spec, "status": status}, pod, manager="kubelet")


def job_status(sim: Simulation, name: str = "pi") -> dict[str, Any]:
    found = sim.get("jobs", "default", name)
    assert found is not None
    return dict(found.get("status") or {})


def test_selector_and_labels_are_generated(sim: Simulation) -> None:
    sim.apply(job())
    found = sim.get("jobs", "default", "pi")
    assert found is not None
    uid = found["metadata"]["uid"]
    assert found["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    [pod] = active_pods(sim)
    labels = pod["metadata"]["labels"]
    assert labels["batch.kubernetes.io/job-name"] == labels["job-name"] == "pi"
    assert labels["batch.kubernetes.io/controller-uid"] == labels["controller-uid"] == uid
    assert pod["metadata"]["finalizers"] == [TRACKING]
    assert pod["metadata"]["name"].startswith("pi-")
    assert job_status(sim)["active"] == 1 and "startTime" in job_status(sim)


def test_completions_run_with_parallelism_until_complete(sim: Simulation) -> None:
    sim.apply(job(completions=4, parallelism=2))
    for expected_succeeded in (2, 4):
        pods = active_pods(sim)
        assert len(pods) == 2
        for pod in pods:
            finish(sim, pod)
        assert job_status(sim)["succeeded"] == expected_succeeded
    status = job_status(sim)
    assert "active" not in status and status["uncountedTerminatedPods"] == {}
    assert condition(sim.get("jobs", "default", "pi") or {}, "Complete") is not None
    complete = condition(sim.get("jobs", "default", "pi") or {}, "Complete")
    assert complete is not None and complete["reason"] == "CompletionsReached"
    criteria = condition(sim.get("jobs", "default", "pi") or {}, "SuccessCriteriaMet")
    assert criteria is not None and criteria["status"] == "True"
    assert "completionTime" in status
    assert all(TRACKING not in (p["metadata"].get("finalizers") or []) for p in sim.pods())
    found = sim.get("jobs", "default", "pi")
    assert found is not None
    assert [e["message"] for e in sim.events_for(found, reason="Completed")] == ["Job completed"]
    assert len(sim.events_for(found, reason="SuccessfulCreate")) == 4
    sim.run_for(30)
    assert len(sim.pods(**{"job-name": "pi"})) == 4  # finished pods stay, no new ones


def test_failed_pods_are_replaced_until_the_backoff_limit(sim: Simulation) -> None:
    sim.apply(job(backoffLimit=1))
    finish(sim, active_pods(sim)[0], "Failed")
    assert job_status(sim)["failed"] == 1
    assert active_pods(sim) == []  # backoff: 10 s before the replacement
    sim.run_for(11)
    [replacement] = active_pods(sim)
    finish(sim, replacement, "Failed")
    found = sim.get("jobs", "default", "pi")
    assert found is not None
    failed = condition(found, "Failed")
    assert failed is not None and failed["reason"] == "BackoffLimitExceeded"
    assert failed["message"] == "Job has reached the specified backoff limit"
    assert condition(found, "FailureTarget") is not None
    assert job_status(sim)["failed"] == 2
    assert sim.events_for(found, reason="BackoffLimitExceeded")
    sim.run_for(60)
    assert active_pods(sim) == []


def test_indexed_job_runs_each_index_until_it_succeeds(sim: Simulation) -> None:
    sim.apply(job(completions=3, parallelism=3, completionMode="Indexed"))
    pods = {
        p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]: p
        for p in active_pods(sim)
    }
    assert sorted(pods) == ["0", "1", "2"]
    one = pods["1"]
    assert one["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] == "1"
    assert one["spec"]["hostname"] == "pi-1"
    assert one["metadata"]["name"].startswith("pi-1-")
    env = one["spec"]["containers"][0]["env"]
    assert env[0]["name"] == "JOB_COMPLETION_INDEX"
    finish(sim, pods["0"])
    finish(sim, pods["1"], "Failed")
    assert job_status(sim)["completedIndexes"] == "0"
    sim.run_for(11)
    again = [
        p
        for p in active_pods(sim)
        if p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] == "1"
    ]
    assert len(again) == 1
    finish(sim, again[0])
    finish(sim, pods["2"])
    status = job_status(sim)
    assert status["completedIndexes"] == "0-2" and status["succeeded"] == 3
    assert status["failed"] == 1
    assert condition(sim.get("jobs", "default", "pi") or {}, "Complete") is not None


def test_active_deadline_fails_the_job_and_stops_its_pods(sim: Simulation) -> None:
    sim.apply(job(activeDeadlineSeconds=30, parallelism=2, completions=2))
    assert len(active_pods(sim)) == 2
    sim.run_for(31)
    found = sim.get("jobs", "default", "pi")
    assert found is not None
    failed = condition(found, "Failed")
    assert failed is not None and failed["reason"] == "DeadlineExceeded"
    assert active_pods(sim) == []


def test_suspended_job_runs_nothing_until_resumed(sim: Simulation) -> None:
    sim.apply(job(suspend=True))
    assert active_pods(sim) == []
    suspended = condition(sim.get("jobs", "default", "pi") or {}, "Suspended")
    assert suspended is not None and suspended["status"] == "True"
    sim.patch("jobs", "default", "pi", {"spec": {"suspend": False}})
    assert len(active_pods(sim)) == 1
    resumed = condition(sim.get("jobs", "default", "pi") or {}, "Suspended")
    assert resumed is not None and resumed["status"] == "False"
    assert resumed["reason"] == "JobResumed"


def test_finished_job_is_deleted_after_its_ttl(sim: Simulation) -> None:
    sim.apply(job(ttlSecondsAfterFinished=60))
    finish(sim, active_pods(sim)[0])
    sim.run_for(30)
    assert sim.get("jobs", "default", "pi") is not None
    sim.run_for(31)
    assert sim.get("jobs", "default", "pi") is None
    assert sim.pods(**{"job-name": "pi"}) == []


def test_a_deleted_running_pod_counts_as_failed_and_is_replaced(sim: Simulation) -> None:
    sim.apply(job())
    [pod] = active_pods(sim)
    sim.delete("pods", "default", pod["metadata"]["name"])  # unbound: no grace period
    sim.run_for(2)
    assert job_status(sim)["failed"] == 1
    assert sim.get("pods", "default", pod["metadata"]["name"]) is None  # finalizer released
    assert len(active_pods(sim)) == 1
