"""Node heartbeats and the node-lifecycle-controller on a stopped clock: leases, conditions,
taints, evictions and recovery."""

from __future__ import annotations

from typing import Any

from sandbox.clock import parse_time
from sandbox.store import Obj
from sandbox.world import Condition
from tests.support.playing import pod, run_pod
from tests.support.simulation import Simulation, condition, ready


def node(sim: Simulation, name: str) -> Obj:
    found = sim.get("nodes", "", name)
    assert found is not None
    return found


def taints(sim: Simulation, name: str) -> set[tuple[str, str]]:
    return {(t["key"], t["effect"]) for t in node(sim, name)["spec"].get("taints") or ()}


def status_of(sim: Simulation, name: str, kind: str) -> str:
    found = condition(node(sim, name), kind)
    assert found is not None, kind
    return str(found["status"])


def running_pod(sim: Simulation, name: str, node_name: str, **spec: Any) -> Obj:
    """A pod bound to `node_name` and Ready, as the kubelet there would report it."""
    sim.apply(pod(name, {"name": "app", "image": "nginx:1.27"}, node=node_name, **spec))
    run_pod(sim, name, node=node_name)
    # Once the kubelet runs pods it reports readiness itself: wait for it either way.
    sim.run_until(lambda: ready(sim.get("pods", "default", name) or {}), timeout=120)
    written = sim.get("pods", "default", name)
    assert written is not None
    return written


def stop_kubelet(sim: Simulation, name: str) -> None:
    sim.world.node(name).heartbeat = False


def test_leases_are_renewed_every_ten_seconds() -> None:
    sim = Simulation(nodes=2)
    lease = sim.get("leases", "kube-node-lease", "node-1")
    assert lease is not None
    assert lease["spec"]["holderIdentity"] == "node-1"
    assert lease["spec"]["leaseDurationSeconds"] == 40
    assert lease["metadata"]["ownerReferences"][0]["kind"] == "Node"
    first = parse_time(lease["spec"]["renewTime"])
    sim.run_for(30)
    renewed = sim.get("leases", "kube-node-lease", "node-1")
    assert renewed is not None
    assert (parse_time(renewed["spec"]["renewTime"]) - first).total_seconds() == 30


def test_the_kubelet_posts_healthy_conditions_with_heartbeats() -> None:
    sim = Simulation(nodes=1)
    ready = condition(node(sim, "node-1"), "Ready")
    assert ready is not None and ready["reason"] == "KubeletReady"
    before = parse_time(ready["lastHeartbeatTime"])
    sim.run_for(61)
    after = condition(node(sim, "node-1"), "Ready")
    assert after is not None and parse_time(after["lastHeartbeatTime"]) > before
    assert after["lastTransitionTime"] == ready["lastTransitionTime"]
    for kind in ("MemoryPressure", "DiskPressure", "PIDPressure"):
        assert status_of(sim, "node-1", kind) == "False"


def test_a_silent_kubelet_turns_its_node_unknown_and_unreachable() -> None:
    sim = Simulation(nodes=2)
    stop_kubelet(sim, "node-2")
    sim.run_for(35)
    assert status_of(sim, "node-2", "Ready") == "True"
    waited = sim.run_until(lambda: status_of(sim, "node-2", "Ready") == "Unknown", timeout=30)
    assert 35 + waited <= 50
    ready = condition(node(sim, "node-2"), "Ready")
    assert ready is not None
    assert ready["reason"] == "NodeStatusUnknown"
    assert ready["message"] == "Kubelet stopped posting node status."
    assert status_of(sim, "node-2", "MemoryPressure") == "Unknown"
    assert taints(sim, "node-2") == {
        ("node.kubernetes.io/unreachable", "NoSchedule"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
    }
    assert all(t.get("timeAdded") for t in node(sim, "node-2")["spec"]["taints"])
    assert status_of(sim, "node-1", "Ready") == "True" and not taints(sim, "node-1")
    [event] = sim.events_for(node(sim, "node-2"), reason="NodeNotReady")
    assert event["message"] == "Node node-2 status is now: NodeNotReady"


def test_pods_on_a_lost_node_turn_not_ready_and_are_evicted_after_their_toleration() -> None:
    sim = Simulation(nodes=2)
    running_pod(sim, "web", "node-2")  # default tolerations: unreachable for 300 s
    stop_kubelet(sim, "node-2")
    sim.run_until(lambda: ("node.kubernetes.io/unreachable", "NoExecute") in taints(sim, "node-2"))
    web = sim.get("pods", "default", "web")
    assert web is not None
    ready = condition(web, "Ready")
    assert ready is not None and ready["status"] == "False"
    assert sim.events_for(web, reason="NodeNotReady")
    sim.run_for(290)
    web = sim.get("pods", "default", "web")
    assert web is not None and not web["metadata"].get("deletionTimestamp")
    sim.run_until(
        lambda: (
            (p := sim.get("pods", "default", "web")) is None
            or bool(p["metadata"].get("deletionTimestamp"))
        ),
        timeout=15,
    )
    [event] = sim.events_for(web, reason="TaintManagerEviction")
    assert event["message"] == "Marking for deletion Pod default/web"


def test_a_pod_without_the_toleration_is_evicted_at_once() -> None:
    sim = Simulation(nodes=2)
    running_pod(sim, "fragile", "node-2", tolerations=[])
    running_pod(sim, "forever", "node-2", tolerations=[{"operator": "Exists"}])
    stop_kubelet(sim, "node-2")
    sim.run_until(lambda: ("node.kubernetes.io/unreachable", "NoExecute") in taints(sim, "node-2"))
    fragile = sim.get("pods", "default", "fragile")
    assert fragile is None or fragile["metadata"].get("deletionTimestamp")
    sim.run_for(400)
    forever = sim.get("pods", "default", "forever")
    assert forever is not None and not forever["metadata"].get("deletionTimestamp")


def test_a_forced_not_ready_condition_taints_the_node_not_ready() -> None:
    sim = Simulation(nodes=2)
    sim.world.node("node-1").conditions["Ready"] = Condition(
        "False", "KubeletNotReady", "container runtime network not ready"
    )
    sim.run_for(11)
    ready = condition(node(sim, "node-1"), "Ready")
    assert ready is not None and ready["status"] == "False"
    assert ready["message"] == "container runtime network not ready"
    assert taints(sim, "node-1") == {
        ("node.kubernetes.io/not-ready", "NoSchedule"),
        ("node.kubernetes.io/not-ready", "NoExecute"),
    }
    reasons = {e["reason"] for e in sim.events_for(node(sim, "node-1"))}
    assert "NodeNotReady" in reasons


def test_memory_pressure_taints_the_node_and_new_pods_go_elsewhere() -> None:
    sim = Simulation(nodes=2)
    sim.world.node("node-1").conditions["MemoryPressure"] = Condition(
        "True", "KubeletHasInsufficientMemory", "kubelet has insufficient memory available"
    )
    sim.run_for(11)
    assert status_of(sim, "node-1", "MemoryPressure") == "True"
    assert status_of(sim, "node-1", "Ready") == "True"
    assert taints(sim, "node-1") == {("node.kubernetes.io/memory-pressure", "NoSchedule")}
    assert sim.events_for(node(sim, "node-1"), reason="NodeHasInsufficientMemory")
    for i in range(3):
        sim.apply(pod(f"new-{i}", {"name": "app", "image": "nginx:1.27"}))
    placed = {
        (sim.get("pods", "default", f"new-{i}") or {})["spec"].get("nodeName") for i in range(3)
    }
    assert placed == {"node-2"}


def test_recovery_clears_the_taints_and_reposts_ready() -> None:
    sim = Simulation(nodes=2)
    stop_kubelet(sim, "node-2")
    sim.run_until(lambda: status_of(sim, "node-2", "Ready") == "Unknown")
    sim.world.node("node-2").heartbeat = True
    sim.run_until(lambda: not taints(sim, "node-2"), timeout=20)
    ready = condition(node(sim, "node-2"), "Ready")
    assert ready is not None and ready["status"] == "True" and ready["reason"] == "KubeletReady"
    assert sim.events_for(node(sim, "node-2"), reason="NodeReady")


def test_clearing_a_forced_condition_untaints_the_node() -> None:
    sim = Simulation(nodes=1)
    forced = sim.world.node("node-1").conditions
    forced["DiskPressure"] = Condition(
        "True", "KubeletHasDiskPressure", "kubelet has disk pressure"
    )
    sim.run_for(11)
    assert taints(sim, "node-1") == {("node.kubernetes.io/disk-pressure", "NoSchedule")}
    del forced["DiskPressure"]
    sim.run_for(11)
    assert not taints(sim, "node-1")
    assert status_of(sim, "node-1", "DiskPressure") == "False"


def test_a_custom_condition_is_posted_and_removed_when_cleared() -> None:
    sim = Simulation(nodes=1)
    forced = sim.world.node("node-1").conditions
    forced["GPUHealthy"] = Condition("False", "XidError", "GPU has fallen off the bus")
    sim.run_for(11)
    assert status_of(sim, "node-1", "GPUHealthy") == "False"
    assert status_of(sim, "node-1", "Ready") == "True"
    assert not taints(sim, "node-1")
    del forced["GPUHealthy"]
    sim.run_for(11)
    assert condition(node(sim, "node-1"), "GPUHealthy") is None


def test_cordoning_adds_the_unschedulable_taint() -> None:
    sim = Simulation(nodes=1)
    sim.patch("nodes", "", "node-1", {"spec": {"unschedulable": True}})
    assert taints(sim, "node-1") == {("node.kubernetes.io/unschedulable", "NoSchedule")}
