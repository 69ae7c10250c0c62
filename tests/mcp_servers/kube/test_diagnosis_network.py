"""The network analyzers through the real MCP client: a Service sending traffic to a port no
container listens on, an Ingress whose backend Service or port does not exist, a NetworkPolicy
selecting nothing. Each recommended fix is applied through the write tools and the finding is
gone afterwards, with the object pointing at what exists.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_servers.kube.diagnosis import network
from mcp_servers.kube.diagnosis.snapshot import Snapshot
from sandbox.server import Sandbox
from tests.support.diagnosis import Doctor, deployment, rollout, tool
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

WEB = {"image": "nginx:1.27", "ports": [{"name": "http", "containerPort": 80}]}


@pytest.fixture
def doctor(shared_sandbox: Sandbox) -> Doctor:
    return Doctor(shared_sandbox)


@pytest.fixture
def web(shared_kubectl: Kubectl, namespace: str) -> str:
    """A Deployment `web` whose pods listen on port 80, and a Service `web` in front of it."""
    shared_kubectl("apply", "-f", "-", input=deployment("web", WEB, namespace=namespace))
    service(shared_kubectl, namespace, target=80)
    rollout(shared_kubectl, "web", namespace)
    return "web"


def apply(kubectl: Kubectl, manifest: dict[str, Any]) -> None:
    kubectl("apply", "-f", "-", input=json.dumps(manifest))


def service(kubectl: Kubectl, namespace: str, *, target: int) -> None:
    apply(
        kubectl,
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web", "namespace": namespace},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": target}]},
        },
    )


def gone(doctor: Doctor, code: str, namespace: str) -> None:
    eventually(lambda: code not in doctor.codes(namespace=namespace), what=f"{code} is gone")


def test_service_target_port_mismatch_is_fixed_by_the_container_port(
    shared_kubectl: Kubectl, namespace: str, doctor: Doctor, web: str
) -> None:
    service(shared_kubectl, namespace, target=8080)

    finding = doctor.finding("ServiceTargetPortMismatch", namespace=namespace)
    assert "targetPort 8080" in finding["summary"]
    assert any("container ports: [80]" in e["text"] for e in finding["evidence"])
    fix = doctor.fix("ServiceTargetPortMismatch", namespace=namespace)
    (port,) = fix["patch"]["spec"]["ports"]  # the whole list, only the broken entry changed
    assert (port["port"], port["targetPort"]) == (80, 80)
    assert fix["confidence"] >= 0.85  # the pods declare one port: no doubt which
    doctor.apply(fix)
    gone(doctor, "ServiceTargetPortMismatch", namespace)

    def endpoint_port() -> int:
        endpoints = shared_kubectl.json("get", "endpoints", "web", "-n", namespace)
        subsets = endpoints.get("subsets") or []
        return int(subsets[0]["ports"][0]["port"]) if subsets and subsets[0].get("addresses") else 0

    assert eventually(endpoint_port, what="ready endpoints on the container port") == 80


@pytest.mark.parametrize(
    ("backend", "code"),
    [
        pytest.param({"name": "web-svc", "port": {"number": 80}}, "IngressBackendMissing",
                     id="service-missing"),
        pytest.param({"name": "web", "port": {"number": 8080}}, "IngressBackendPortMissing",
                     id="port-missing"),
    ],
)  # fmt: skip
def test_ingress_backend_to_nowhere_is_pointed_at_the_service_that_exists(
    shared_kubectl: Kubectl,
    namespace: str,
    doctor: Doctor,
    web: str,
    backend: dict[str, Any],
    code: str,
) -> None:
    ingress = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": "shop", "namespace": namespace},
        "spec": {
            "rules": [
                {
                    "host": "shop.example.com",
                    "http": {
                        "paths": [
                            {"path": "/", "pathType": "Prefix", "backend": {"service": backend}}
                        ]
                    },
                }
            ]
        },
    }
    apply(shared_kubectl, ingress)

    finding = doctor.finding(code, namespace=namespace)
    assert finding["ref"] == {"kind": "Ingress", "name": "shop", "namespace": namespace}
    fix = doctor.fix(code, namespace=namespace)
    assert tool(fix) == ["patch"] and fix["patch_type"] == "merge"
    path = fix["patch"]["spec"]["rules"][0]["http"]["paths"][0]
    assert path["backend"] == {"service": {"name": "web", "port": {"number": 80}}}
    assert path["path"] == "/" and fix["patch"]["spec"]["rules"][0]["host"] == "shop.example.com"
    doctor.apply(fix)
    gone(doctor, code, namespace)
    live = shared_kubectl.json("get", "ingress", "shop", "-n", namespace)
    assert live["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["name"] == "web"


def test_network_policy_selecting_nothing_is_pointed_at_the_pods_it_meant(
    shared_kubectl: Kubectl, namespace: str, doctor: Doctor, web: str
) -> None:
    policy = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "web-ingress", "namespace": namespace},
        "spec": {
            "podSelector": {"matchLabels": {"app": "wbe"}},
            "policyTypes": ["Ingress"],
            "ingress": [{"ports": [{"port": 80}]}],
        },
    }
    apply(shared_kubectl, policy)

    finding = doctor.finding("NetworkPolicySelectsNothing", namespace=namespace)
    assert finding["ref"]["name"] == "web-ingress"
    fix = doctor.fix("NetworkPolicySelectsNothing", namespace=namespace)
    assert fix["patch"] == {"spec": {"podSelector": {"matchLabels": {"app": "web"}}}}
    assert fix["risk"] == "high"  # the policy starts filtering real traffic
    doctor.apply(fix)
    gone(doctor, "NetworkPolicySelectsNothing", namespace)


@pytest.mark.parametrize(("ready", "found"), [(True, False), (False, True)])
def test_endpoints_behind_ready_pods_are_no_finding(ready: bool, found: bool) -> None:
    """Endpoints listing no address while a selected pod is Ready are behind their sources (read
    a moment before the Service was fixed, or the controller catching up): only pods that are
    not Ready make a Service without ready endpoints a finding."""
    condition = {"type": "Ready", "status": "True" if ready else "False"}
    pod = {
        "metadata": {"name": "web-1", "namespace": "shop", "labels": {"app": "web"}},
        "status": {"phase": "Running", "conditions": [condition]},
    }
    snapshot = Snapshot(api=None, namespace="shop")  # type: ignore[arg-type]
    snapshot.items = {
        "pods": [pod],
        "services": [
            {
                "metadata": {"name": "web", "namespace": "shop"},
                "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]},
            }
        ],
        "endpoints": [{"metadata": {"name": "web", "namespace": "shop"}, "subsets": []}],
    }
    codes = {finding.code for finding in network.analyze(snapshot)}
    assert ("ServiceNoReadyEndpoints" in codes) is found, codes
