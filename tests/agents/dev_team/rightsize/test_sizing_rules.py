"""The right-size rules on their own: requests from use x headroom in sane units and above the
floors, no churn for small differences, limits that still hold the requests and the peak, the
saving priced per replica, and the window read from the question."""

from __future__ import annotations

from typing import Any

import pytest

from agents.dev_team.rightsize import Size, recommend, usage_queries, window_of

MIB = 2**20


def web(requests: dict[str, str] | None = None, limits: dict[str, str] | None = None) -> Any:
    resources = {"requests": requests or {}, "limits": limits or {}}
    return {"name": "web", "image": "nginx:1.27", "resources": resources}


def used(cpu: float, memory_mib: float) -> dict[str, float]:
    return {"cpu_p95": cpu, "memory_peak": memory_mib * MIB, "samples": 120, "pods": 2}


def test_an_over_provisioned_container_is_lowered_to_rounded_use_with_headroom() -> None:
    size = recommend(web({"cpu": "1", "memory": "1Gi"}), used(0.133, 200))
    assert size.edits() == [
        {"path": "spec.template.spec.containers[name=web].resources.requests.cpu", "value": "175m"},
        {"path": "spec.template.spec.containers[name=web].resources.requests.memory",
         "value": "256Mi"},
    ]  # fmt: skip
    # (1 - 0.175) cores x $25 + 0.75 GiB x $3.5 per replica and month
    assert size.saving() == pytest.approx(0.825 * 25 + 0.75 * 3.5)
    assert "CPU p95 133m of 1 -> request 175m" in size.describe()
    assert "memory peak 200Mi of 1Gi -> request 256Mi" in size.describe()


def test_the_floors_hold_and_a_small_difference_changes_nothing() -> None:
    tiny = recommend(web({"cpu": "500m", "memory": "512Mi"}), used(0.001, 2))
    assert tiny.new == {"requests.cpu": 0.01, "requests.memory": 32 * MIB}
    close = recommend(web({"cpu": "150m", "memory": "256Mi"}), used(0.1, 190))
    assert close.new == {} and close.edits() == [] and close.saving() == 0


def test_a_container_that_needs_more_is_raised_and_its_limits_follow() -> None:
    size = recommend(
        web({"cpu": "50m", "memory": "64Mi"}, {"cpu": "100m", "memory": "100Mi"}), used(0.2, 90)
    )
    assert size.new["requests.cpu"] == 0.275 and size.new["limits.cpu"] == 0.275
    assert size.new["requests.memory"] == 120 * MIB  # 90Mi x 1.25 = 112.5, in 8Mi steps
    assert size.new["limits.memory"] == 136 * MIB  # 90Mi x 1.5 = 135, above the request
    assert size.saving() < 0  # raising requests costs


def test_unset_requests_are_set_and_a_roomy_limit_is_kept() -> None:
    size = recommend(web(limits={"memory": "1Gi"}), used(0.02, 10))
    assert size.new == {"requests.cpu": 0.03, "requests.memory": 32 * MIB}
    assert "of no request" in size.describe()
    assert isinstance(size, Size) and size.as_dict()["edits"] == size.edits()


@pytest.mark.parametrize(
    ("question", "window"),
    [
        pytest.param("right-size web", "1h", id="default"),
        pytest.param("right-size web over the last 30m", "30m", id="minutes"),
        pytest.param("is web oversized for 2 hours?", "2h", id="hours-in-words"),
        pytest.param("right-size web over 7 days", "7d", id="days"),
    ],
)
def test_the_window_is_read_from_the_question(question: str, window: str) -> None:
    assert window_of(question) == window


def test_the_queries_match_only_the_workloads_own_pods() -> None:
    queries = usage_queries("Deployment", "web", "shop", "1h")
    assert 'pod=~"web-[a-z0-9]{1,10}-[a-z0-9]{5}"' in queries["memory_peak"]
    assert "[1h:15s]" in queries["cpu_p95"] and "[2m]" in queries["cpu_p95"]
    assert 'pod=~"db-[0-9]+"' in usage_queries("StatefulSet", "db", "shop", "5m")["samples"]
