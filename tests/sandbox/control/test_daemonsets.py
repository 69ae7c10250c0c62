"""DaemonSet controller: one pod per eligible node (nodeSelector, affinity, taints), new nodes get
a pod, removed ones lose it, RollingUpdate within maxUnavailable. The test plays the scheduler
and kubelet itself (binds each pod to its pinned node, makes it Ready, finishes deletions)."""

from __future__ import annotations

from typing import Any

from sandbox import bootstrap
from sandbox.store import Obj
from tests.support import playing
from tests.support.simulation import Simulation


def daemonset(name: str = "agent", **pod_spec: Any) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "agent", "image": "busybox:1.36"}], **pod_spec},
            },
        },
    }


def pinned_node(pod: Obj) -> str:
    terms = pod["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    return str(terms["nodeSelectorTerms"][0]["matchFields"][0]["values"][0])


def play_kubelet(sim: Simulation) -> None:
    """Bind pods to the node their affinity pins, make them Ready; finish deletions."""
    playing.play_kubelet(sim, place=pinned_node)


def new_image(sim: Simulation, image: str) -> None:
    containers = [{"name": "agent", "image": image}]
    sim.patch(
        "daemonsets",
        "default",
        "agent",
        {"spec": {"template": {"spec": {"containers": containers}}}},
    )


def nodes_with_pods(sim: Simulation, app: str = "agent") -> list[str]:
    return sorted(
        pinned_node(p) for p in sim.pods(app=app) if not p["metadata"].get("deletionTimestamp")
    )


def ds_status(sim: Simulation, name: str = "agent") -> dict[str, Any]:
    ds = sim.get("daemonsets", "default", name)
    assert ds is not None
    return dict(ds.get("status") or {})


def test_one_pod_per_node_pinned_by_node_affinity() -> None:
    sim = Simulation(nodes=3, only=("daemonset-controller",))
    sim.apply(daemonset())
    assert nodes_with_pods(sim) == ["node-1", "node-2", "node-3"]
    pod = sim.pods(app="agent")[0]
    assert pod["metadata"]["name"].startswith("agent-")
    assert pod["metadata"]["labels"]["pod-template-generation"] == "1"
    assert "controller-revision-hash" in pod["metadata"]["labels"]
    tolerated = {(t["key"], t["effect"]) for t in pod["spec"]["tolerations"]}
    assert ("node.kubernetes.io/unreachable", "NoExecute") in tolerated
    assert ("node.kubernetes.io/unschedulable", "NoSchedule") in tolerated
    assert ("node.kubernetes.io/network-unavailable", "NoSchedule") not in tolerated
    play_kubelet(sim)
    status = ds_status(sim)
    assert status["desiredNumberScheduled"] == 3
    assert status["currentNumberScheduled"] == 3
    assert status["numberReady"] == 3 and status["numberAvailable"] == 3
    assert status["updatedNumberScheduled"] == 3
    assert status["numberMisscheduled"] == 0 and "numberUnavailable" not in status
    ds = sim.get("daemonsets", "default", "agent")
    assert ds is not None
    assert len(sim.events_for(ds, reason="SuccessfulCreate")) == 3


def test_node_selector_limits_the_nodes() -> None:
    sim = Simulation(nodes=3, only=("daemonset-controller",))
    sim.patch("nodes", "", "node-2", {"metadata": {"labels": {"disk": "ssd"}}})
    sim.apply(daemonset(nodeSelector={"disk": "ssd"}))
    assert nodes_with_pods(sim) == ["node-2"]
    assert ds_status(sim)["desiredNumberScheduled"] == 1
    # the label goes away: the pod goes too
    sim.patch("nodes", "", "node-2", {"metadata": {"labels": {"disk": None}}})
    play_kubelet(sim)
    assert nodes_with_pods(sim) == []


def test_untolerated_no_schedule_taint_keeps_the_node_out() -> None:
    sim = Simulation(nodes=3, only=("daemonset-controller",))
    taint = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
    sim.patch("nodes", "", "node-3", {"spec": {"taints": [taint]}})
    sim.apply(daemonset())
    assert nodes_with_pods(sim) == ["node-1", "node-2"]
    tolerant = daemonset(
        "gpu-agent",
        tolerations=[{"key": "dedicated", "operator": "Equal", "value": "gpu"}],
    )
    sim.apply(tolerant)
    assert nodes_with_pods(sim, "gpu-agent") == ["node-1", "node-2", "node-3"]


def test_unschedulable_node_still_runs_daemon_pods() -> None:
    sim = Simulation(nodes=2, only=("daemonset-controller",))
    taint = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
    sim.patch("nodes", "", "node-1", {"spec": {"unschedulable": True, "taints": [taint]}})
    sim.apply(daemonset())
    assert nodes_with_pods(sim) == ["node-1", "node-2"]


def test_new_node_gets_a_pod_and_removed_node_loses_it() -> None:
    sim = Simulation(nodes=2, only=("daemonset-controller",))
    sim.apply(daemonset())
    play_kubelet(sim)
    sim.apply(bootstrap.node("node-9", clock_now=sim.objects.clock.timestamp()))
    assert nodes_with_pods(sim) == ["node-1", "node-2", "node-9"]
    sim.delete("nodes", "", "node-1")
    play_kubelet(sim)
    assert nodes_with_pods(sim) == ["node-2", "node-9"]


def test_rolling_update_replaces_one_node_at_a_time() -> None:
    sim = Simulation(nodes=3, only=("daemonset-controller",))
    sim.apply(daemonset())
    play_kubelet(sim)
    before = {p["metadata"]["name"] for p in sim.pods(app="agent")}
    new_image(sim, "busybox:1.37")
    terminating = [p for p in sim.pods(app="agent") if p["metadata"].get("deletionTimestamp")]
    assert len(terminating) == 1  # maxUnavailable 1
    rounds = 0
    while (
        ds_status(sim).get("updatedNumberScheduled", 0) < 3
        or ds_status(sim).get("numberAvailable", 0) < 3
    ):
        play_kubelet(sim)
        rounds += 1
        assert rounds < 10
    after = {p["metadata"]["name"] for p in sim.pods(app="agent")}
    assert not before & after
    images = {p["spec"]["containers"][0]["image"] for p in sim.pods(app="agent")}
    assert images == {"busybox:1.37"}
    assert ds_status(sim)["observedGeneration"] == 2


def test_on_delete_strategy_leaves_old_pods_running() -> None:
    sim = Simulation(nodes=2, only=("daemonset-controller",))
    ds = daemonset()
    ds["spec"]["updateStrategy"] = {"type": "OnDelete"}
    sim.apply(ds)
    play_kubelet(sim)
    new_image(sim, "busybox:1.37")
    play_kubelet(sim)
    assert not any(p["metadata"].get("deletionTimestamp") for p in sim.pods(app="agent"))
    assert "updatedNumberScheduled" not in ds_status(sim)
