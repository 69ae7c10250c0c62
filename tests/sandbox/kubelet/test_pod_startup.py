"""A bound pod is pulled, created, started and becomes Ready, reported as a kubelet would."""

from __future__ import annotations

from sandbox.kubelet.images import ImageCatalog
from tests.sandbox.kubelet.podspecs import container, messages, pod, reasons, status
from tests.support.simulation import Simulation, condition, ready


def test_nginx_pod_runs_and_becomes_ready_with_events_in_order() -> None:
    sim = Simulation(nodes=2)
    sim.apply(pod("web", {"name": "web", "image": "nginx:1.27"}))
    sim.run_until(lambda: ready(sim.get("pods", "default", "web")), timeout=30)

    current = status(sim, "web")
    assert current["phase"] == "Running"
    assert current["hostIP"] == "172.18.0.3"
    assert current["podIP"].startswith("10.244.1.")
    assert current["qosClass"] == "BestEffort"
    assert current["startTime"]
    web = container(sim, "web")
    assert web["ready"] is True and web["started"] is True and web["restartCount"] == 0
    assert web["image"] == "docker.io/library/nginx:1.27"
    digest = ImageCatalog.default().resolve("nginx:1.27")
    assert digest is not None and web["imageID"] == digest.image_id
    assert web["containerID"].startswith("containerd://") and len(web["containerID"]) == 77
    assert "running" in web["state"]
    for kind in ("PodReadyToStartContainers", "Initialized", "ContainersReady", "Ready"):
        found = condition(sim.get("pods", "default", "web") or {}, kind)
        assert found is not None and found["status"] == "True" and found["lastTransitionTime"]
    assert reasons(sim, "web") == ["Pulling", "Pulled", "Created", "Started"]
    assert messages(sim, "web", "Pulled")[0].startswith(
        'Successfully pulled image "nginx:1.27" in '
    )
    assert messages(sim, "web", "Created") == ["Created container: web"]


def test_pod_pending_with_container_creating_while_the_image_pulls() -> None:
    sim = Simulation(nodes=1)
    sim.apply(
        pod("db", {"image": "postgres:17", "env": [{"name": "POSTGRES_PASSWORD", "value": "x"}]})
    )
    assert status(sim, "db")["phase"] == "Pending"
    assert container(sim, "db")["state"]["waiting"]["reason"] == "ContainerCreating"
    sim.run_until(lambda: ready(sim.get("pods", "default", "db")), timeout=30)


def test_second_pod_finds_the_image_already_present_on_the_node() -> None:
    sim = Simulation(nodes=1)
    sim.apply(pod("a", {"image": "nginx:1.27"}))
    sim.run_for(5)
    sim.apply(pod("b", {"image": "nginx:1.27"}))
    sim.run_for(1)
    assert messages(sim, "b", "Pulled") == [
        'Container image "nginx:1.27" already present on machine'
    ]
    assert ready(sim.get("pods", "default", "b"))
    assert status(sim, "a")["podIP"] != status(sim, "b")["podIP"]


def test_guaranteed_qos_when_requests_equal_limits() -> None:
    sim = Simulation(nodes=1)
    limits = {"cpu": "500m", "memory": "128Mi"}
    sim.apply(
        pod("g", {"image": "nginx:1.27", "resources": {"limits": limits, "requests": limits}})
    )
    assert status(sim, "g")["qosClass"] == "Guaranteed"
