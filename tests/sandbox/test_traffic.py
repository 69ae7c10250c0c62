"""The per-Service traffic model: offered load from profiles, served by ready endpoints.

Each test builds its own `Traffic` over a Simulation's store and moves it with explicit sandbox
times (`advance(t)`), so counts are exact. Pods are created directly and their readiness written
by the test (playing the kubelet); the control plane is never stepped after that, so no
controller changes what the traffic model sees.
"""

from __future__ import annotations

from typing import Any

import pytest

from sandbox.kubelet.profiles import Profile
from sandbox.metrics import Usage
from sandbox.objects import WriteOptions
from sandbox.traffic import BUCKETS, DEFAULT_RPS, ServiceCounters, Traffic
from tests.support.simulation import Simulation

NAMESPACE = "default"


def profile(name: str, *, rps: float, error_rate: float = 0.0, latency_ms: float = 20) -> Profile:
    return Profile(
        name=name,
        ports=(8080,),
        http_paths=("/",),
        startup_seconds=1,
        cpu_millis=50,
        memory_bytes=64 * 2**20,
        requests_per_second=rps,
        error_rate=error_rate,
        latency_ms=latency_ms,
    )


def add_pod(
    sim: Simulation, name: str, labels: dict[str, str], *, profile: str, ready: bool
) -> None:
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "labels": labels,
            "annotations": {"sandbox.kubecrew.io/profile": profile},
        },
        "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
    }
    # Created without settling, so no scheduler or kubelet ever touches it: its status stays
    # what this test writes. (Create Services first: `sim.apply` settles the control plane.)
    created = sim.objects.create(
        sim.rt("pods"), pod, namespace=NAMESPACE, opts=WriteOptions(field_manager="test")
    )
    status = {"phase": "Running", "conditions": [{"type": "Ready", "status": str(ready)}]}
    sim.objects.write(sim.rt("pods"), {**created, "status": status}, created, manager="test")
    sim.cluster.store.commit()


def add_service(sim: Simulation, name: str, selector: dict[str, str]) -> None:
    sim.apply(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name},
            "spec": {"selector": selector, "ports": [{"port": 80, "targetPort": 8080}]},
        }
    )


def counters(traffic: Traffic, service: str) -> ServiceCounters:
    found = {name: c for ns, name, c in traffic.services() if ns == NAMESPACE}
    return found[service]


@pytest.fixture
def sim() -> Simulation:
    sim = Simulation(nodes=2)
    sim.world.profiles.define(profile("shop", rps=20, error_rate=0.1, latency_ms=50))
    sim.world.profiles.define(profile("flaky", rps=10, error_rate=0.5))
    sim.world.profiles.define(profile("steady", rps=30))
    sim.world.profiles.define(profile("batch", rps=0))
    return sim


def traffic_for(sim: Simulation) -> Traffic:
    return Traffic(sim.cluster.store, sim.world.profiles, sim.cluster.metrics)


def test_ready_endpoints_serve_the_offered_rate_with_their_error_rate(sim: Simulation) -> None:
    add_service(sim, "shop", {"app": "shop"})
    add_pod(sim, "shop-1", {"app": "shop"}, profile="shop", ready=True)
    add_pod(sim, "shop-2", {"app": "shop"}, profile="shop", ready=True)
    traffic = traffic_for(sim)
    traffic.advance(1000.0)
    traffic.advance(1010.0)

    served = counters(traffic, "shop")
    assert served.requests["200"] == pytest.approx(360)  # 2 pods x 20 rps x 10 s, 10% errors
    assert served.requests["500"] == pytest.approx(40)
    assert served.requests["503"] == 0
    assert served.count == pytest.approx(400)


def test_offered_load_counts_unready_pods_but_only_ready_ones_serve(sim: Simulation) -> None:
    add_service(sim, "shop", {"app": "shop"})
    add_pod(sim, "shop-1", {"app": "shop"}, profile="shop", ready=True)
    add_pod(sim, "shop-2", {"app": "shop"}, profile="shop", ready=False)
    traffic = traffic_for(sim)
    traffic.advance(0.0)
    traffic.advance(5.0)

    served = counters(traffic, "shop")
    assert served.count == pytest.approx(200)  # both pods' load still arrives
    assert served.requests["500"] == pytest.approx(20)


def test_no_ready_endpoint_fails_every_request_with_503(sim: Simulation) -> None:
    add_service(sim, "shop", {"app": "shop"})
    add_pod(sim, "shop-1", {"app": "shop"}, profile="shop", ready=False)
    traffic = traffic_for(sim)
    traffic.advance(0.0)
    traffic.advance(10.0)

    served = counters(traffic, "shop")
    assert served.requests == {"200": 0, "500": 0, "503": pytest.approx(200)}


def test_selector_matching_no_pod_gets_the_default_load_all_503(sim: Simulation) -> None:
    add_service(sim, "typo", {"app": "shpo"})
    add_pod(sim, "shop-1", {"app": "shop"}, profile="shop", ready=True)
    traffic = traffic_for(sim)
    traffic.advance(0.0)
    traffic.advance(3.0)

    served = counters(traffic, "typo")
    assert served.requests["503"] == pytest.approx(3 * DEFAULT_RPS)
    assert served.requests["200"] == served.requests["500"] == 0


def test_pods_without_own_traffic_get_the_default_load(sim: Simulation) -> None:
    add_service(sim, "jobs", {"app": "jobs"})
    add_pod(sim, "jobs-1", {"app": "jobs"}, profile="batch", ready=True)
    traffic = traffic_for(sim)
    traffic.advance(0.0)
    traffic.advance(2.0)

    assert counters(traffic, "jobs").requests["200"] == pytest.approx(2 * DEFAULT_RPS)


def test_error_fraction_is_the_rate_weighted_mean_of_ready_pods(sim: Simulation) -> None:
    add_service(sim, "mixed", {"tier": "api"})
    add_pod(sim, "steady-1", {"tier": "api"}, profile="steady", ready=True)
    add_pod(sim, "flaky-1", {"tier": "api"}, profile="flaky", ready=True)
    traffic = traffic_for(sim)
    traffic.advance(0.0)
    traffic.advance(10.0)

    served = counters(traffic, "mixed")
    assert served.count == pytest.approx(400)  # (30 + 10) rps x 10 s
    assert served.requests["500"] / served.count == pytest.approx(0.125)  # 10 x 0.5 / 40


def test_latency_histogram_is_cumulative_around_the_profile_latency(sim: Simulation) -> None:
    add_service(sim, "shop", {"app": "shop"})
    add_pod(sim, "shop-1", {"app": "shop"}, profile="shop", ready=True)
    traffic = traffic_for(sim)
    traffic.advance(0.0)
    traffic.advance(100.0)

    served = counters(traffic, "shop")
    by_bound = dict(zip(BUCKETS, served.buckets, strict=True))
    assert by_bound[0.05] == pytest.approx(served.count / 2)  # the median is 50 ms
    assert served.buckets == sorted(served.buckets)
    assert by_bound[0.005] < served.count * 0.01
    assert by_bound[10.0] == pytest.approx(served.count)
    assert 0.05 < served.seconds / served.count < 0.06  # mean of the log-normal, above median


def test_counters_accumulate_across_calls_and_vanish_with_their_service(sim: Simulation) -> None:
    add_service(sim, "shop", {"app": "shop"})
    add_pod(sim, "shop-1", {"app": "shop"}, profile="shop", ready=True)
    traffic = traffic_for(sim)
    traffic.advance(0.0)
    traffic.advance(1.0)
    traffic.advance(1.0)  # no time passed: nothing added
    traffic.advance(4.0)
    assert counters(traffic, "shop").count == pytest.approx(80)

    sim.delete("services", NAMESPACE, "shop")
    traffic.advance(5.0)
    assert "shop" not in {name for _, name, _ in traffic.services()}


def test_cpu_seconds_integrate_measured_usage_over_sandbox_time(sim: Simulation) -> None:
    traffic = traffic_for(sim)
    sim.cluster.metrics.record_pod("default", "shop-1", {"app": Usage(cpu="250m", memory="64Mi")})
    sim.cluster.metrics.record_node("node-1", Usage(cpu="1500m", memory="2Gi"))
    traffic.advance(0.0)
    traffic.advance(10.0)
    sim.cluster.metrics.record_pod("default", "shop-1", {"app": Usage(cpu="1", memory="64Mi")})
    traffic.advance(12.0)

    assert traffic.container_cpu_seconds("default", "shop-1", "app") == pytest.approx(4.5)
    assert traffic.node_cpu_seconds("node-1") == pytest.approx(18.0)
