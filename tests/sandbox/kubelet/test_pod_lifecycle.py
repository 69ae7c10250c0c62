"""Init containers, sidecars, graceful deletion, dead nodes, and what `kubectl top`/`logs` read."""

from __future__ import annotations

from sandbox.kubelet.profiles import ProfileBook
from sandbox.kubelet.usage import pod_usage
from tests.sandbox.kubelet.podspecs import container, logs, pod, reasons, status
from tests.support.simulation import Simulation, condition, ready


def test_init_containers_run_in_order_before_the_app() -> None:
    sim = Simulation(nodes=1)
    spec = pod(
        "app",
        {"name": "web", "image": "nginx:1.27"},
        initContainers=[
            {
                "name": "migrate",
                "image": "busybox:1.36",
                "command": ["sh", "-c", "echo migrating; sleep 10"],
            },
            {"name": "warm", "image": "busybox:1.36", "command": ["sleep", "5"]},
        ],
    )
    sim.apply(spec)
    sim.run_for(4)
    current = status(sim, "app")
    assert current["phase"] == "Pending"
    assert "running" in current["initContainerStatuses"][0]["state"]
    assert current["initContainerStatuses"][1]["state"]["waiting"][
        "reason"
    ] == "PodInitializing" or (
        current["initContainerStatuses"][1]["state"]["waiting"]["reason"] == "ContainerCreating"
    )
    initialized = condition(sim.get("pods", "default", "app") or {}, "Initialized")
    assert initialized is not None and initialized["status"] == "False"
    assert initialized["reason"] == "ContainersNotInitialized"
    assert container(sim, "app")["state"]["waiting"]["reason"] in (
        "PodInitializing",
        "ContainerCreating",
    )
    sim.run_until(lambda: ready(sim.get("pods", "default", "app")), timeout=40)
    inits = status(sim, "app")["initContainerStatuses"]
    assert [i["state"]["terminated"]["reason"] for i in inits] == ["Completed", "Completed"]
    started = [e for e in reasons(sim, "app") if e == "Started"]
    assert len(started) == 3
    assert logs(sim, "app", "migrate") == "migrating\n"


def test_sidecar_keeps_running_next_to_the_app() -> None:
    sim = Simulation(nodes=1)
    spec = pod(
        "app",
        {"name": "web", "image": "nginx:1.27"},
        initContainers=[{"name": "proxy", "image": "nginx:1.27", "restartPolicy": "Always"}],
    )
    sim.apply(spec)
    sim.run_until(lambda: ready(sim.get("pods", "default", "app")), timeout=20)
    proxy = container(sim, "app", init=True)
    assert "running" in proxy["state"] and proxy["started"] is True


def test_graceful_delete_stops_containers_then_removes_the_pod() -> None:
    sim = Simulation(nodes=1)
    sim.apply(pod("web", {"name": "web", "image": "nginx:1.27"}))
    sim.run_for(5)
    before = sim.get("pods", "default", "web")
    assert before is not None
    sim.delete("pods", "default", "web")
    assert sim.get("pods", "default", "web") is not None  # terminating
    kills = [e for e in sim.events_for(before, reason="Killing")]
    assert [e["message"] for e in kills] == ["Stopping container web"]
    sim.run_for(3)
    assert sim.get("pods", "default", "web") is None


def test_pods_on_a_dead_node_are_frozen() -> None:
    sim = Simulation(nodes=1)
    sim.apply(pod("web", {"name": "web", "image": "nginx:1.27"}))
    sim.world.node("node-1").heartbeat = False
    sim.run_for(10)
    assert container(sim, "web")["state"]["waiting"]["reason"] == "ContainerCreating"
    assert "Started" not in reasons(sim, "web")
    sim.world.node("node-1").heartbeat = True
    sim.run_until(lambda: ready(sim.get("pods", "default", "web")), timeout=30)


def test_usage_is_recorded_for_kubectl_top_and_logs_flow() -> None:
    sim = Simulation(nodes=2)
    sim.apply(
        pod(
            "api",
            {"name": "api", "image": "ghcr.io/kubecrew/shop-api:1.0.0"},
            metadata={"labels": {"app": "api"}},
        )
    )
    sim.run_for(40)
    metrics = sim.cluster.metrics.pod("default", "api")
    assert metrics is not None and metrics["metadata"]["labels"] == {"app": "api"}
    usage = metrics["containers"][0]["usage"]
    assert usage["cpu"].endswith("m") and usage["memory"].endswith("Ki")
    assert int(usage["memory"][:-2]) * 1024 >= 150 * 1024 * 1024
    node = sim.cluster.metrics.node("node-1")
    assert node is not None and node["usage"]["cpu"] != "0m"
    found = sim.get("pods", "default", "api")
    assert found is not None
    now = sim.cluster.clock.seconds()
    assert pod_usage(sim.world, found, now) == pod_usage(sim.world, found, now)
    assert "shop-api listening on :8080" in logs(sim, "api", "api")
    assert len(logs(sim, "api", "api").splitlines()) > 3


def test_profile_override_makes_a_running_app_leak_until_oom_killed() -> None:
    sim = Simulation(nodes=1)
    limits = {"limits": {"memory": "128Mi"}}
    sim.apply(
        pod(
            "web",
            {"name": "web", "image": "nginx:1.27", "resources": limits},
            metadata={"labels": {"app": "web"}},
        )
    )
    sim.run_for(20)
    assert container(sim, "web")["restartCount"] == 0
    sim.world.profiles.override(
        namespace="default",
        selector={"app": "web"},
        image=None,
        changes={"memory_growth": 10 * 1024 * 1024},
    )
    sim.run_until(lambda: container(sim, "web")["restartCount"] >= 1, timeout=60)
    assert container(sim, "web")["lastState"]["terminated"]["reason"] == "OOMKilled"


def test_profile_annotation_and_overrides_pick_the_profile() -> None:
    book = ProfileBook()
    plain = {"metadata": {"namespace": "default", "labels": {"app": "a"}}}
    nginx = {"name": "web", "image": "nginx:1.27"}
    assert book.profile_for(plain, nginx).name == "nginx"
    annotated = {"metadata": {"annotations": {"sandbox.kubecrew.io/profile": "web=leaky,x=idle"}}}
    assert book.profile_for(annotated, nginx).name == "leaky"
    override = book.override(
        namespace="default", selector={"app": "a"}, image="nginx", changes={"error_rate": 0.5}
    )
    assert book.profile_for(plain, nginx).error_rate == 0.5
    assert book.profile_for({"metadata": {"namespace": "other"}}, nginx).error_rate == 0.0
    book.clear(override)
    assert book.profile_for(plain, nginx).error_rate == 0.0
