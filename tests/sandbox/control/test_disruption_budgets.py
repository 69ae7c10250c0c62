"""PodDisruptionBudget status follows the selected pods' health, in step with eviction.

Only the disruption controller runs; the tests play kubelet by writing the Ready condition.
"""

from __future__ import annotations

from typing import Any

import pytest

from sandbox.store import Obj
from sandbox.subresources import budget_numbers
from tests.support.playing import pod, run_pod
from tests.support.simulation import Simulation, condition


@pytest.fixture
def sim() -> Simulation:
    return Simulation(nodes=2, only=("disruption-controller",))


def pods(sim: Simulation, count: int, *, ready: int, app: str = "web") -> None:
    """`count` bound, running pods labelled app=`app`, the first `ready` of them Ready."""
    for index in range(count):
        sim.apply(pod(f"{app}-{index}", metadata={"labels": {"app": app}}))
        run_pod(sim, f"{app}-{index}", ready=index < ready)


def budget(sim: Simulation, **spec: Any) -> Obj:
    body = {"selector": {"matchLabels": {"app": "web"}}, **spec}
    manifest = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web"},
        "spec": body,
    }
    sim.apply(manifest)
    found = sim.get("poddisruptionbudgets", "default", "web")
    assert found is not None
    return found


def numbers(pdb: Obj) -> tuple[int, int, int, int]:
    status = pdb["status"]
    return (
        status["currentHealthy"],
        status["desiredHealthy"],
        status["expectedPods"],
        status["disruptionsAllowed"],
    )


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param({"minAvailable": 2}, (3, 2, 4, 1), id="min-available-int"),
        pytest.param({"minAvailable": "50%"}, (3, 2, 4, 1), id="min-available-percent"),
        pytest.param({"minAvailable": "60%"}, (3, 3, 4, 0), id="min-available-percent-rounds-up"),
        pytest.param({"maxUnavailable": 1}, (3, 3, 4, 0), id="max-unavailable-int"),
        pytest.param({"maxUnavailable": "50%"}, (3, 2, 4, 1), id="max-unavailable-percent"),
        pytest.param({"maxUnavailable": "30%"}, (3, 2, 4, 1), id="max-unavailable-percent-up"),
    ],
)
def test_status_numbers_follow_the_budget(
    sim: Simulation, spec: dict[str, Any], expected: tuple[int, int, int, int]
) -> None:
    pods(sim, 4, ready=3)

    pdb = budget(sim, **spec)

    assert numbers(pdb) == expected
    assert pdb["status"]["observedGeneration"] == pdb["metadata"]["generation"]
    healthy, desired, pod_count = budget_numbers(sim.cluster.lifecycle, pdb)
    assert (healthy, desired, pod_count) == expected[:3]  # eviction judges the same way


def test_condition_turns_false_when_a_pod_becomes_unready(sim: Simulation) -> None:
    pods(sim, 3, ready=3)
    pdb = budget(sim, minAvailable=2)
    allowed = condition(pdb, "DisruptionAllowed")
    assert allowed is not None
    assert (allowed["status"], allowed["reason"]) == ("True", "SufficientPods")

    run_pod(sim, "web-0", ready=False)

    pdb = sim.get("poddisruptionbudgets", "default", "web") or {}
    assert numbers(pdb) == (2, 2, 3, 0)
    allowed = condition(pdb, "DisruptionAllowed")
    assert allowed is not None
    assert (allowed["status"], allowed["reason"]) == ("False", "InsufficientPods")


def test_pods_of_other_labels_and_deleted_pods_do_not_count(sim: Simulation) -> None:
    pods(sim, 2, ready=2)
    pods(sim, 2, ready=2, app="other")
    budget(sim, maxUnavailable=0)

    sim.delete("pods", "default", "web-1")  # graceful: it keeps a deletionTimestamp

    pdb = sim.get("poddisruptionbudgets", "default", "web") or {}
    assert numbers(pdb) == (1, 1, 1, 0)


def test_budget_without_pods_reports_no_pods(sim: Simulation) -> None:
    pdb = budget(sim, minAvailable=1)

    assert numbers(pdb) == (0, 1, 0, 0)
    assert [e["message"] for e in sim.events_for(pdb, reason="NoPods")] == [
        "No matching pods found"
    ]


def test_expired_disrupted_pod_entries_are_dropped(sim: Simulation) -> None:
    pods(sim, 2, ready=2)
    pdb = budget(sim, minAvailable=1)
    stamp = sim.objects.clock.timestamp()
    evicted = {**pdb, "status": {**pdb["status"], "disruptedPods": {"web-0": stamp}}}
    sim.write("poddisruptionbudgets", evicted, pdb)

    pdb = sim.get("poddisruptionbudgets", "default", "web") or {}
    assert pdb["status"]["disruptedPods"] == {"web-0": stamp}
    assert numbers(pdb) == (1, 1, 2, 0)

    sim.run_for(121)

    pdb = sim.get("poddisruptionbudgets", "default", "web") or {}
    assert "disruptedPods" not in pdb["status"]
    assert numbers(pdb) == (2, 1, 2, 1)
