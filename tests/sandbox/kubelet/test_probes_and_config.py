"""Probes answered by application profiles, and ConfigMap/Secret references a pod waits for."""

from __future__ import annotations

from tests.sandbox.kubelet.podspecs import (
    container,
    event_count,
    messages,
    pod,
    reasons,
    status,
    waiting_reason,
)
from tests.support.simulation import Simulation, ready


def _cm(name: str, **data: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def test_readiness_probe_on_a_wrong_port_keeps_the_pod_unready() -> None:
    sim = Simulation(nodes=1)
    probe = {"httpGet": {"path": "/", "port": 8081}, "periodSeconds": 5}
    sim.apply(pod("web", {"name": "web", "image": "nginx:1.27", "readinessProbe": probe}))
    sim.run_for(40)
    assert not ready(sim.get("pods", "default", "web"))
    assert status(sim, "web")["phase"] == "Running"
    web = container(sim, "web")
    assert web["started"] is True and web["ready"] is False
    ip = status(sim, "web")["podIP"]
    refused = f"dial tcp {ip}:8081: connect: connection refused"
    assert messages(sim, "web", "Unhealthy") == [
        f'Readiness probe failed: Get "http://{ip}:8081/": {refused}'
    ]
    assert event_count(sim, "web", "Unhealthy") >= 6


def test_readiness_probe_on_the_right_port_makes_the_pod_ready_after_a_period() -> None:
    sim = Simulation(nodes=1)
    probe = {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 10}
    ports = [{"name": "http", "containerPort": 80}]
    sim.apply(
        pod("web", {"name": "web", "image": "nginx:1.27", "ports": ports, "readinessProbe": probe})
    )
    waited = sim.run_until(lambda: ready(sim.get("pods", "default", "web")), timeout=30)
    assert waited >= 10  # the probe at start finds nothing listening yet; the next one passes


def test_liveness_probe_on_a_wrong_path_restarts_the_container() -> None:
    sim = Simulation(nodes=1)
    probe = {"httpGet": {"path": "/healthz", "port": 80}, "periodSeconds": 5, "failureThreshold": 3}
    sim.apply(pod("web", {"name": "web", "image": "nginx:1.27", "livenessProbe": probe}))
    sim.run_until(lambda: container(sim, "web")["restartCount"] >= 2, timeout=120)
    assert "Liveness probe failed: HTTP probe failed with statuscode: 404" in messages(
        sim, "web", "Unhealthy"
    )
    assert "Container web failed liveness probe, will be restarted" in messages(
        sim, "web", "Killing"
    )


def test_exec_probe_that_fails_keeps_the_container_unready() -> None:
    sim = Simulation(nodes=1)
    probe = {"exec": {"command": ["sh", "-c", "exit 1"]}, "periodSeconds": 5}
    sim.apply(pod("w", {"image": "nginx:1.27", "readinessProbe": probe}))
    sim.run_for(20)
    assert not ready(sim.get("pods", "default", "w"))
    passing = {"exec": {"command": ["cat", "/tmp/healthy"]}, "periodSeconds": 5}
    sim.apply(pod("ok", {"image": "nginx:1.27", "readinessProbe": passing}))
    sim.run_for(10)
    assert ready(sim.get("pods", "default", "ok"))


def test_missing_configmap_env_is_a_config_error_until_it_is_created() -> None:
    sim = Simulation(nodes=1)
    env = [
        {"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "app-config", "key": "mode"}}}
    ]
    sim.apply(pod("app", {"name": "app", "image": "nginx:1.27", "env": env}))
    sim.run_for(5)
    assert waiting_reason(sim, "app") == "CreateContainerConfigError"
    assert (
        container(sim, "app")["state"]["waiting"]["message"] == 'configmap "app-config" not found'
    )
    assert 'Error: configmap "app-config" not found' in messages(sim, "app", "Failed")
    sim.apply(_cm("app-config", other="x"))
    sim.run_for(1)
    assert container(sim, "app")["state"]["waiting"]["message"] == (
        "couldn't find key mode in ConfigMap default/app-config"
    )
    sim.patch("configmaps", "default", "app-config", {"data": {"mode": "fast"}})
    sim.run_until(lambda: ready(sim.get("pods", "default", "app")), timeout=5)


def test_missing_configmap_volume_fails_to_mount_until_it_exists() -> None:
    sim = Simulation(nodes=1)
    spec = pod(
        "app",
        {
            "name": "app",
            "image": "nginx:1.27",
            "volumeMounts": [{"name": "cfg", "mountPath": "/etc/app"}],
        },
        volumes=[{"name": "cfg", "configMap": {"name": "app-config"}}],
    )
    sim.apply(spec)
    sim.run_for(10)
    assert waiting_reason(sim, "app") == "ContainerCreating"
    assert messages(sim, "app", "FailedMount") == [
        'MountVolume.SetUp failed for volume "cfg" : configmap "app-config" not found'
    ]
    assert "Pulling" not in reasons(sim, "app")
    sim.apply(_cm("app-config", mode="fast"))
    sim.run_until(lambda: ready(sim.get("pods", "default", "app")), timeout=10)


def test_optional_secret_volume_is_fine_when_missing() -> None:
    sim = Simulation(nodes=1)
    spec = pod(
        "app",
        {"image": "nginx:1.27"},
        volumes=[{"name": "s", "secret": {"secretName": "nope", "optional": True}}],
    )
    sim.apply(spec)
    sim.run_until(lambda: ready(sim.get("pods", "default", "app")), timeout=10)
