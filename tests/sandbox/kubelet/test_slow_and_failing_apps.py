"""The `error-rate` and `slow` faults, seen where a real app shows them: in its request log and
in the probes that wait for its answers. A healthy app logs and probes exactly as before."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest

from sandbox.kubelet.profiles import ANNOTATION
from tests.sandbox.kubelet.podspecs import container, event_count, logs, messages, pod, status
from tests.support.simulation import Simulation, ready

WEB_LINES = ('level=info msg="GET /healthz 200 1.2ms"', 'level=info msg="GET / 200 8.4ms"')
LOGFMT_MS = re.compile(r'msg="(?:GET|POST) \S+ \d{3} (\d+(?:\.\d+)?)ms"')
JSON_MS = re.compile(r'"duration_ms":(\d+)')


def web(name: str = "web", **probes: dict[str, Any]) -> dict[str, Any]:
    """A pod running the `web` profile (logfmt request lines, listening on 8080)."""
    metadata = {"labels": {"app": name}, "annotations": {ANNOTATION: "web"}}
    return pod(name, {"name": "web", "image": "nginx:1.27", **probes}, metadata=metadata)


def up(sim: Simulation, name: str) -> bool:
    found = sim.get("pods", "default", name)
    return found is not None and ready(found)


def started(sim: Simulation, spec: dict[str, Any]) -> str:
    sim.apply(spec)
    name = str(spec["metadata"]["name"])
    sim.run_until(lambda: up(sim, name), timeout=60, what=name)
    return name


def lines_after(
    sim: Simulation, name: str, seconds: float, container_name: str = "web"
) -> list[str]:
    """What the container logs in the next `seconds` of sandbox time."""
    before = len(logs(sim, name, container_name).splitlines())
    sim.run_for(seconds)
    return logs(sim, name, container_name).splitlines()[before:]


def test_a_healthy_app_logs_its_own_lines_verbatim() -> None:
    sim = Simulation(nodes=1)
    name = started(sim, web())
    # a fault that touches neither errors nor latency changes nothing either
    sim.cluster.faults.add({"kind": "memory-leak", "selector": {"app": "web"}, "rate": "1Ki"})
    logged = lines_after(sim, name, 300)
    assert len(logged) >= 16
    assert set(logged) == set(WEB_LINES)
    assert all(a != b for a, b in itertools.pairwise(logged))  # in turn, as before


def test_half_the_request_lines_of_an_app_failing_half_its_requests_are_errors() -> None:
    sim = Simulation(nodes=1)
    name = started(sim, web())
    sim.cluster.faults.add({"kind": "error-rate", "selector": {"app": "web"}, "rate": 0.5})
    logged = lines_after(sim, name, 600)
    errors = [line for line in logged if line.startswith("level=error")]
    assert len(logged) >= 36 and len(errors) == len(logged) // 2
    assert all(re.fullmatch(r'level=error msg="GET /\S* 500 \d+\.\dms"', e) for e in errors)
    assert set(logged) - set(errors) <= set(WEB_LINES)  # the rest succeed as they always did
    assert up(sim, name)  # errors alone fail no probe


def test_an_app_failing_a_tenth_of_its_requests_logs_a_tenth_as_errors() -> None:
    sim = Simulation(nodes=1)
    shop = pod("api", {"name": "api", "image": "ghcr.io/kubecrew/shop-api:1.0.0"})
    name = started(sim, shop)
    sim.cluster.faults.add(
        {"kind": "error-rate", "image": "ghcr.io/kubecrew/shop-api", "rate": 0.1}
    )
    logged = lines_after(sim, name, 1500, "api")
    errors = [line for line in logged if '"level":"error"' in line]
    assert len(logged) >= 90 and abs(len(errors) - len(logged) / 10) < 1  # evenly spread
    assert all(re.search(r'"msg":"(GET|POST) /api/\w+ 500"', e) for e in errors)


@pytest.mark.parametrize(
    ("profile", "pattern"),
    [pytest.param("web", LOGFMT_MS, id="logfmt"), pytest.param("shop-api", JSON_MS, id="json")],
)
def test_a_slow_app_logs_durations_near_its_latency(profile: str, pattern: re.Pattern[str]) -> None:
    sim = Simulation(nodes=1)
    metadata = {"annotations": {ANNOTATION: profile}}
    name = started(sim, pod("app", {"name": "web", "image": "nginx:1.27"}, metadata=metadata))
    healthy = [float(d) for line in lines_after(sim, name, 60) for d in pattern.findall(line)]
    assert healthy and max(healthy) < 100
    sim.cluster.faults.add({"kind": "slow", "latency_ms": 900})
    durations = [float(d) for line in lines_after(sim, name, 300) for d in pattern.findall(line)]
    assert len(durations) >= 16
    assert all(800 <= d <= 1020 for d in durations)
    assert 880 <= sum(durations) / len(durations) <= 920


HEALTHZ = {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 5}


def test_a_slow_app_fails_its_http_readiness_probe_by_timeout_until_it_is_fast_again() -> None:
    sim = Simulation(nodes=1)
    name = started(sim, web(readinessProbe=HEALTHZ))
    fault = sim.cluster.faults.add({"kind": "slow", "selector": {"app": "web"}, "latency_ms": 1500})
    sim.run_until(lambda: not up(sim, name), timeout=30)
    ip = status(sim, name)["podIP"]
    assert messages(sim, name, "Unhealthy") == [
        f'Readiness probe failed: Get "http://{ip}:8080/healthz": context deadline exceeded '
        "(Client.Timeout exceeded while awaiting headers)"
    ]
    assert container(sim, name)["restartCount"] == 0  # readiness only takes it out of service
    sim.cluster.faults.clear(fault.id)
    sim.run_until(lambda: up(sim, name), timeout=30)


def test_a_slow_app_fails_its_liveness_probe_and_is_restarted() -> None:
    sim = Simulation(nodes=1)
    name = started(sim, web(livenessProbe={**HEALTHZ, "failureThreshold": 2}))
    sim.cluster.faults.add({"kind": "slow", "selector": {"app": "web"}, "latency_ms": 1000})
    sim.run_until(lambda: container(sim, name)["restartCount"] >= 2, timeout=180)
    assert "Container web failed liveness probe, will be restarted" in messages(
        sim, name, "Killing"
    )
    assert all("context deadline exceeded" in m for m in messages(sim, name, "Unhealthy"))
    assert container(sim, name)["lastState"]["terminated"]["exitCode"] == 137


@pytest.mark.parametrize(
    ("probe", "latency"),
    [
        pytest.param(HEALTHZ, 900, id="http-faster-than-the-default-1s"),
        pytest.param({**HEALTHZ, "timeoutSeconds": 3}, 2500, id="http-within-its-timeout"),
        pytest.param({"tcpSocket": {"port": 8080}, "periodSeconds": 5}, 5000, id="tcp-handshake"),
    ],
)
def test_a_probe_that_waits_long_enough_still_passes(probe: dict[str, Any], latency: int) -> None:
    sim = Simulation(nodes=1)
    name = started(sim, web(readinessProbe=probe, livenessProbe=probe))
    sim.cluster.faults.add({"kind": "slow", "selector": {"app": "web"}, "latency_ms": latency})
    sim.run_for(60)
    assert up(sim, name)
    assert event_count(sim, name, "Unhealthy") == 0


def test_a_slow_grpc_server_fails_its_grpc_probe_with_the_kubelets_words() -> None:
    sim = Simulation(nodes=1)
    name = started(sim, web(readinessProbe={"grpc": {"port": 8080}, "periodSeconds": 5}))
    sim.cluster.faults.add({"kind": "slow", "latency_ms": 1200})
    sim.run_until(lambda: not up(sim, name), timeout=30)
    assert messages(sim, name, "Unhealthy") == [
        "Readiness probe failed: timeout: health rpc did not complete within 1s"
    ]


def test_healthy_probes_write_no_unhealthy_event_once_the_app_is_up() -> None:
    sim = Simulation(nodes=1)
    name = started(sim, web(readinessProbe=HEALTHZ, livenessProbe=HEALTHZ))
    before = event_count(sim, name, "Unhealthy")
    sim.run_for(120)
    assert event_count(sim, name, "Unhealthy") == before
    assert up(sim, name) and container(sim, name)["restartCount"] == 0
