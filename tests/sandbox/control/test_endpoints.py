"""Endpoints and EndpointSlices follow Services' selectors and their pods' readiness.

Only the two endpoint controllers run here; the tests play scheduler and kubelet by writing
`spec.nodeName`, `status.podIP` and the Ready condition themselves.
"""

from __future__ import annotations

from typing import Any

import pytest

from sandbox.store import Obj
from tests.support import playing
from tests.support.playing import run_pod
from tests.support.simulation import Simulation


@pytest.fixture
def sim() -> Simulation:
    return Simulation(nodes=2, only=("endpoint-controller", "endpointslice-controller"))


def pod(
    sim: Simulation,
    name: str,
    *,
    labels: dict[str, str] | None = None,
    ports: list[dict[str, Any]] | None = None,
) -> Obj:
    container: dict[str, Any] = {"name": "web", "image": "nginx:1.27"}
    if ports:
        container["ports"] = ports
    return sim.apply(playing.pod(name, container, metadata={"labels": labels or {"app": "web"}}))[0]


def service(sim: Simulation, name: str = "web", **spec: Any) -> Obj:
    body: dict[str, Any] = {"selector": {"app": "web"}, "ports": [{"port": 80}], **spec}
    manifest = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": body}
    return sim.apply(manifest)[0]


def endpoints(sim: Simulation, name: str = "web") -> Obj:
    found = sim.get("endpoints", "default", name)
    assert found is not None
    return found


def slices(sim: Simulation, name: str = "web") -> list[Obj]:
    return [
        s
        for s in sim.list("endpointslices", "default")
        if s["metadata"]["labels"].get("kubernetes.io/service-name") == name
    ]


def ips(subset_addresses: list[dict[str, Any]] | None) -> list[str]:
    return [a["ip"] for a in subset_addresses or []]


def test_ready_pods_are_addresses_and_unready_pods_not_ready_addresses(sim: Simulation) -> None:
    service(sim, ports=[{"name": "http", "port": 80, "targetPort": 8080}])
    pod(sim, "web-a")
    pod(sim, "web-b")
    run_pod(sim, "web-a", ip="10.244.1.5", ready=True)
    run_pod(sim, "web-b", ip="10.244.2.7", ready=False, node="node-2")

    (subset,) = endpoints(sim)["subsets"]
    assert ips(subset["addresses"]) == ["10.244.1.5"]
    assert ips(subset["notReadyAddresses"]) == ["10.244.2.7"]
    assert subset["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    address = subset["addresses"][0]
    assert address["nodeName"] == "node-1"
    assert address["targetRef"]["kind"] == "Pod"
    assert address["targetRef"]["name"] == "web-a"


def test_pod_turning_ready_moves_to_addresses(sim: Simulation) -> None:
    service(sim)
    pod(sim, "web-a")
    run_pod(sim, "web-a", ip="10.244.1.5", ready=False)
    assert "addresses" not in endpoints(sim)["subsets"][0]

    run_pod(sim, "web-a", ip="10.244.1.5", ready=True)

    (subset,) = endpoints(sim)["subsets"]
    assert ips(subset["addresses"]) == ["10.244.1.5"]
    assert "notReadyAddresses" not in subset


def test_selector_matching_no_pod_leaves_subsets_empty(sim: Simulation) -> None:
    pod(sim, "web-a")
    run_pod(sim, "web-a", ip="10.244.1.5", ready=True)

    service(sim, selector={"app": "other"})

    assert not endpoints(sim).get("subsets")


def test_relabelled_pod_leaves_the_endpoints(sim: Simulation) -> None:
    service(sim)
    pod(sim, "web-a")
    run_pod(sim, "web-a", ip="10.244.1.5", ready=True)
    assert endpoints(sim).get("subsets")

    sim.patch("pods", "default", "web-a", {"metadata": {"labels": {"app": "moved"}}})

    assert not endpoints(sim).get("subsets")


def test_named_target_port_resolves_per_pod_and_pods_without_it_are_left_out(
    sim: Simulation,
) -> None:
    service(sim, ports=[{"name": "http", "port": 80, "targetPort": "web"}])
    pod(sim, "web-a", ports=[{"name": "web", "containerPort": 8080}])
    pod(sim, "web-b", ports=[{"name": "web", "containerPort": 9090}])
    pod(sim, "web-c", ports=[{"name": "metrics", "containerPort": 9100}])
    run_pod(sim, "web-a", ip="10.244.1.5", ready=True)
    run_pod(sim, "web-b", ip="10.244.1.6", ready=True)
    run_pod(sim, "web-c", ip="10.244.1.7", ready=True)

    subsets = endpoints(sim)["subsets"]
    by_port = {s["ports"][0]["port"]: ips(s["addresses"]) for s in subsets}
    assert by_port == {8080: ["10.244.1.5"], 9090: ["10.244.1.6"]}
    assert {s["ports"][0]["port"]: len(s["endpoints"]) for s in slices(sim)} == {8080: 1, 9090: 1}


def test_publish_not_ready_addresses_lists_unready_pods_as_ready(sim: Simulation) -> None:
    service(sim, publishNotReadyAddresses=True, clusterIP="None")
    pod(sim, "web-a")
    run_pod(sim, "web-a", ip="10.244.1.5", ready=False)

    (subset,) = endpoints(sim)["subsets"]
    assert ips(subset["addresses"]) == ["10.244.1.5"]
    (endpoint_slice,) = slices(sim)
    assert endpoint_slice["endpoints"][0]["conditions"]["ready"] is True
    assert endpoint_slice["metadata"]["labels"]["service.kubernetes.io/headless"] == ""


def test_slices_mirror_endpoints_with_conditions(sim: Simulation) -> None:
    created = service(sim, ports=[{"name": "http", "port": 80, "targetPort": 8080}])
    pod(sim, "web-a")
    pod(sim, "web-b")
    run_pod(sim, "web-a", ip="10.244.1.5", ready=True)
    run_pod(sim, "web-b", ip="10.244.2.7", ready=False, node="node-2")

    (endpoint_slice,) = slices(sim)
    meta = endpoint_slice["metadata"]
    assert meta["name"].startswith("web-") and len(meta["name"]) == len("web-") + 5
    assert meta["labels"]["endpointslice.kubernetes.io/managed-by"] == (
        "endpointslice-controller.k8s.io"
    )
    assert meta["ownerReferences"][0]["uid"] == created["metadata"]["uid"]
    assert meta["ownerReferences"][0]["controller"] is True
    assert endpoint_slice["addressType"] == "IPv4"
    assert endpoint_slice["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    by_ip = {e["addresses"][0]: e for e in endpoint_slice["endpoints"]}
    assert by_ip["10.244.1.5"]["conditions"] == {
        "ready": True,
        "serving": True,
        "terminating": False,
    }
    assert by_ip["10.244.2.7"]["conditions"]["ready"] is False
    assert by_ip["10.244.2.7"]["nodeName"] == "node-2"
    assert by_ip["10.244.2.7"]["targetRef"]["name"] == "web-b"


def test_terminating_pod_leaves_endpoints_but_stays_in_slice_as_terminating(
    sim: Simulation,
) -> None:
    service(sim)
    pod(sim, "web-a")
    run_pod(sim, "web-a", ip="10.244.1.5", ready=True)

    sim.delete("pods", "default", "web-a")  # bound: graceful, no kubelet here to finish it

    assert not endpoints(sim).get("subsets")
    (endpoint_slice,) = slices(sim)
    assert endpoint_slice["endpoints"][0]["conditions"] == {
        "ready": False,
        "serving": True,
        "terminating": True,
    }


def test_service_without_selector_keeps_user_endpoints(sim: Simulation) -> None:
    sim.apply(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "external"},
            "spec": {"ports": [{"port": 5432}]},
        }
    )
    user_subsets = [{"addresses": [{"ip": "192.168.0.10"}], "ports": [{"port": 5432}]}]
    sim.apply(
        {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {"name": "external"},
            "subsets": user_subsets,
        }
    )
    pod(sim, "web-a")
    run_pod(sim, "web-a", ip="10.244.1.5", ready=True)

    assert ips(endpoints(sim, "external")["subsets"][0]["addresses"]) == ["192.168.0.10"]
    assert slices(sim, "external") == []


def test_deleted_service_takes_its_endpoints_and_slices(sim: Simulation) -> None:
    service(sim)
    pod(sim, "web-a")
    run_pod(sim, "web-a", ip="10.244.1.5", ready=True)
    assert slices(sim)

    sim.delete("services", "default", "web")

    assert sim.get("endpoints", "default", "web") is None
    assert slices(sim) == []


def test_service_without_pods_gets_a_placeholder_slice(sim: Simulation) -> None:
    service(sim)

    (endpoint_slice,) = slices(sim)
    assert endpoint_slice["endpoints"] == []
    assert "ports" not in endpoint_slice
    assert sim.get("endpoints", "default", "web") is not None


def test_many_pods_spread_over_slices_of_one_hundred(sim: Simulation) -> None:
    service(sim)
    for index in range(120):
        pod(sim, f"web-{index}")
    for index in range(120):
        run_pod(sim, f"web-{index}", ip=f"10.244.{index // 200}.{index % 200 + 1}", ready=True)

    assert sorted(len(s["endpoints"]) for s in slices(sim)) == [20, 100]
    assert len(endpoints(sim)["subsets"][0]["addresses"]) == 120
