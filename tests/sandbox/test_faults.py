"""The fault model in-process: each kind changes the simulated world, and clearing restores it."""

from __future__ import annotations

from typing import Any

import pytest

from sandbox.faults import FaultSpecError, UnknownFault
from sandbox.world import Condition
from tests.support.simulation import Simulation, condition

MIB = 1024 * 1024


@pytest.fixture
def sim() -> Simulation:
    return Simulation(nodes=3)


def _pod(name: str, *, namespace: str = "shop", image: str = "nginx:1.27", **labels: str) -> Any:
    return {
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {"containers": [{"name": "app", "image": image}]},
    }


def _profile(sim: Simulation, pod: Any) -> Any:
    return sim.world.profiles.profile_for(pod, pod["spec"]["containers"][0])


def test_node_heartbeat_fault_stops_the_kubelet_until_cleared(sim: Simulation) -> None:
    fault = sim.cluster.faults.add({"kind": "node-heartbeat", "node": "node-2"})
    assert fault.id == "f-1" and fault.state == "active"
    assert sim.world.node("node-2").heartbeat is False
    assert sim.world.node("node-1").heartbeat is True
    sim.cluster.faults.clear(fault.id)
    assert sim.world.node("node-2").heartbeat is True
    assert sim.cluster.faults.list() == []


def test_two_faults_on_one_node_undo_in_any_order(sim: Simulation) -> None:
    faults = sim.cluster.faults
    first = faults.add({"kind": "node-heartbeat", "node": "node-1"})
    second = faults.add({"kind": "node-heartbeat", "node": "node-1"})
    faults.clear(first.id)
    assert sim.world.node("node-1").heartbeat is False  # the second still holds it down
    faults.clear(second.id)
    assert sim.world.node("node-1").heartbeat is True


def test_node_condition_fault_forces_the_condition_until_cleared(sim: Simulation) -> None:
    fault = sim.cluster.faults.add(
        {
            "kind": "node-condition",
            "node": "node-3",
            "type": "MemoryPressure",
            "status": "True",
            "reason": "KubeletHasInsufficientMemory",
            "message": "kubelet has insufficient memory available",
        }
    )
    assert sim.world.node("node-3").conditions == {
        "MemoryPressure": Condition(
            "True", "KubeletHasInsufficientMemory", "kubelet has insufficient memory available"
        )
    }
    sim.cluster.faults.clear(fault.id)
    assert sim.world.node("node-3").conditions == {}


def test_gpu_fault_reports_the_gpu_fell_off_the_bus(sim: Simulation) -> None:
    fault = sim.cluster.faults.add({"kind": "gpu-fault", "node": "node-1"})
    forced = sim.world.node("node-1").conditions["GPUHealthy"]
    assert forced == Condition("False", "GPUFault", "XID 79: GPU has fallen off the bus")
    assert fault.to_dict()["params"]["type"] == "GPUHealthy"
    sim.cluster.faults.clear_all()
    assert "GPUHealthy" not in sim.world.node("node-1").conditions


def test_image_missing_makes_pulls_fail_until_cleared(sim: Simulation) -> None:
    assert sim.world.images.resolve("nginx:1.27") is not None
    fault = sim.cluster.faults.add({"kind": "image-missing", "image": "nginx:1.27"})
    assert sim.world.images.resolve("nginx:1.27") is None
    assert sim.world.images.resolve("nginx:1.28") is not None  # only that tag is gone
    sim.cluster.faults.clear(fault.id)
    assert sim.world.images.resolve("nginx:1.27") is not None


def test_overlapping_image_faults_restore_only_what_no_fault_still_removes(sim: Simulation) -> None:
    faults = sim.cluster.faults
    whole = faults.add({"kind": "image-missing", "image": "redis"})
    faults.add({"kind": "image-missing", "image": "redis:7"})
    faults.clear(whole.id)
    assert sim.world.images.resolve("redis:7") is None
    assert sim.world.images.resolve("redis:7.4") is not None


def test_memory_leak_fault_makes_matching_pods_leak(sim: Simulation) -> None:
    api, web = _pod("api-1", app="api"), _pod("web-1", app="web")
    fault = sim.cluster.faults.add(
        {"kind": "memory-leak", "rate": "10Mi", "namespace": "shop", "selector": {"app": "api"}}
    )
    assert _profile(sim, api).memory_growth == 10 * MIB
    assert _profile(sim, web).memory_growth == 0
    sim.cluster.faults.clear(fault.id)
    assert _profile(sim, api).memory_growth == 0


@pytest.mark.parametrize(
    ("spec", "field", "value"),
    [
        pytest.param({"kind": "error-rate", "rate": 0.5}, "error_rate", 0.5, id="error-rate"),
        pytest.param({"kind": "slow", "latency_ms": 900}, "latency_ms", 900.0, id="slow"),
        pytest.param(
            {"kind": "app-profile", "image": "nginx", "changes": {"cpu_millis": "750m"}},
            "cpu_millis",
            750.0,
            id="app-profile-cpu-quantity",
        ),
        pytest.param(
            {"kind": "app-profile", "selector": "app=api", "changes": {"memory_bytes": "1Gi"}},
            "memory_bytes",
            1024.0 * MIB,
            id="app-profile-selector-as-text",
        ),
    ],
)
def test_profile_faults_change_the_application_until_cleared(
    sim: Simulation, spec: dict[str, Any], field: str, value: float
) -> None:
    pod = _pod("api-1", app="api")
    before = getattr(_profile(sim, pod), field)
    fault = sim.cluster.faults.add(spec)
    assert getattr(_profile(sim, pod), field) == value
    sim.cluster.faults.clear(fault.id)
    assert getattr(_profile(sim, pod), field) == before


def test_api_fault_sets_the_worst_rate_of_the_active_faults(sim: Simulation) -> None:
    faults = sim.cluster.faults
    mild = faults.add({"kind": "api", "error_rate": 0.1, "drop_watch_rate": 0.2})
    faults.add({"kind": "api", "error_rate": "0.3"})
    assert (sim.world.api.error_rate, sim.world.api.drop_watch_rate) == (0.3, 0.2)
    faults.clear(mild.id)
    assert (sim.world.api.error_rate, sim.world.api.drop_watch_rate) == (0.3, 0.0)
    faults.clear_all()
    assert not sim.world.api.any()


def test_scheduled_fault_takes_effect_at_its_time(sim: Simulation) -> None:
    fault = sim.cluster.faults.add({"kind": "node-heartbeat", "node": "node-1", "at": 30})
    assert fault.state == "scheduled"
    sim.run_for(29)
    assert sim.world.node("node-1").heartbeat is True
    sim.run_for(2)
    assert sim.world.node("node-1").heartbeat is False
    listed = sim.cluster.faults.get(fault.id)
    assert listed.state == "active" and listed.since is not None


def test_clearing_a_scheduled_fault_cancels_it(sim: Simulation) -> None:
    fault = sim.cluster.faults.add({"kind": "gpu-fault", "node": "node-2", "at": 10})
    sim.cluster.faults.clear(fault.id)
    sim.run_for(20)
    assert sim.world.node("node-2").conditions == {}


def test_fault_ids_count_up_and_list_in_order(sim: Simulation) -> None:
    faults = sim.cluster.faults
    for node in ("node-1", "node-2", "node-3"):
        faults.add({"kind": "node-heartbeat", "node": node})
    faults.clear("f-2")
    assert [f.id for f in faults.list()] == ["f-1", "f-3"]
    assert faults.add({"kind": "gpu-fault", "node": "node-1"}).id == "f-4"


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        pytest.param({"node": "node-1"}, "kind", id="no-kind"),
        pytest.param({"kind": "earthquake"}, "kind", id="unknown-kind"),
        pytest.param({"kind": "node-heartbeat"}, "node", id="missing-node"),
        pytest.param({"kind": "node-heartbeat", "node": "n", "colour": 1}, "colour", id="extra"),
        pytest.param(
            {"kind": "node-condition", "node": "n", "type": "Ready", "status": "Maybe"},
            "status",
            id="bad-status",
        ),
        pytest.param({"kind": "memory-leak", "rate": "lots"}, "rate", id="bad-quantity"),
        pytest.param({"kind": "error-rate", "rate": 2}, "rate", id="rate-above-one"),
        pytest.param({"kind": "api"}, "error_rate", id="api-without-rates"),
        pytest.param(
            {"kind": "app-profile", "changes": {"colour": "red"}}, "changes.colour", id="bad-change"
        ),
        pytest.param({"kind": "slow", "latency_ms": 5, "at": -1}, "at", id="negative-at"),
    ],
)
def test_bad_spec_names_the_field(sim: Simulation, spec: dict[str, Any], field: str) -> None:
    with pytest.raises(FaultSpecError) as caught:
        sim.cluster.faults.add(spec)
    assert caught.value.field == field
    assert repr(field) in str(caught.value)
    assert sim.cluster.faults.list() == []


def test_clearing_an_unknown_fault_says_how_to_list_them(sim: Simulation) -> None:
    with pytest.raises(UnknownFault, match="GET /kubecrew/v1/faults"):
        sim.cluster.faults.clear("f-99")


def _ready(sim: Simulation, node: str) -> str:
    found = sim.get("nodes", "", node)
    ready = condition(found, "Ready") if found is not None else None
    return ready["status"] if ready is not None else ""


def test_dead_heartbeat_turns_the_node_unknown_and_clearing_heals_it(sim: Simulation) -> None:
    fault = sim.cluster.faults.add({"kind": "node-heartbeat", "node": "node-2"})
    sim.run_for(60, tick=5)
    assert (_ready(sim, "node-1"), _ready(sim, "node-2")) == ("True", "Unknown")
    sim.cluster.faults.clear(fault.id)
    sim.run_for(20, tick=2)
    assert _ready(sim, "node-2") == "True"
