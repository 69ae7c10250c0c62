"""Server-side Tables for networking and nodes: the columns and cells `kubectl get` prints for
Namespaces, Nodes, Services, Endpoints, EndpointSlices, Ingresses, IngressClasses and
NetworkPolicies, as Kubernetes 1.37 does; with the Service IP and Node status rules in detail.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.sandbox.table_objects import (
    Json,
    check_columns_and_cells,
    meta,
    render,
    row_by_name,
)

KIND_CASES = [
    pytest.param(
        "",
        "Namespace",
        {"metadata": meta("team-a", namespace=None), "status": {"phase": "Terminating"}},
        ["Name", "Status", "Age"],
        [],
        {"Status": "Terminating"},
        id="namespace",
    ),
    pytest.param(
        "",
        "Node",
        {
            "metadata": meta(
                "cp-1",
                namespace=None,
                labels={"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "etcd"},
            ),
            "spec": {"unschedulable": True},
            "status": {
                "conditions": [
                    {"type": "MemoryPressure", "status": "False"},
                    {"type": "Ready", "status": "True"},
                ],
                "addresses": [
                    {"type": "InternalIP", "address": "192.168.1.10"},
                    {"type": "Hostname", "address": "cp-1"},
                ],
                "nodeInfo": {
                    "kubeletVersion": "v1.37.0",
                    "osImage": "Debian GNU/Linux 12",
                    "kernelVersion": "6.1.0",
                    "containerRuntimeVersion": "containerd://2.1.0",
                },
            },
        },
        ["Name", "Status", "Roles", "Age", "Version"],
        ["Internal-IP", "External-IP", "OS-Image", "Kernel-Version", "Container-Runtime"],
        {
            "Status": "Ready,SchedulingDisabled",
            "Roles": "control-plane,etcd",
            "Version": "v1.37.0",
            "Internal-IP": "192.168.1.10",
            "External-IP": "<none>",
            "Container-Runtime": "containerd://2.1.0",
        },
        id="node",
    ),
    pytest.param(
        "",
        "Service",
        {
            "metadata": meta("web"),
            "spec": {
                "type": "LoadBalancer",
                "clusterIPs": ["10.96.0.12"],
                "selector": {"app": "web", "tier": "fe"},
                "ports": [
                    {"port": 80, "nodePort": 31000, "protocol": "TCP"},
                    {"port": 53, "protocol": "UDP"},
                ],
            },
            "status": {
                "loadBalancer": {"ingress": [{"ip": "203.0.113.9"}, {"hostname": "lb.example.com"}]}
            },
        },
        ["Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age"],
        ["Selector"],
        {
            "Type": "LoadBalancer",
            "Cluster-IP": "10.96.0.12",
            "External-IP": "203.0.113.9,lb.example.com",
            "Port(s)": "80:31000/TCP,53/UDP",
            "Selector": "app=web,tier=fe",
        },
        id="service",
    ),
    pytest.param(
        "",
        "Endpoints",
        {
            "metadata": meta("web"),
            "subsets": [
                {
                    "addresses": [{"ip": f"10.1.0.{i}"} for i in range(1, 5)],
                    "ports": [{"port": 8080}],
                }
            ],
        },
        ["Name", "Endpoints", "Age"],
        [],
        {"Endpoints": "10.1.0.1:8080,10.1.0.2:8080,10.1.0.3:8080 + 1 more..."},
        id="endpoints",
    ),
    pytest.param(
        "discovery.k8s.io",
        "EndpointSlice",
        {
            "metadata": meta("web-abc"),
            "addressType": "IPv4",
            "ports": [{"name": "http", "port": 8080}],
            "endpoints": [{"addresses": ["10.1.0.1"]}, {"addresses": ["10.1.0.2"]}],
        },
        ["Name", "AddressType", "Ports", "Endpoints", "Age"],
        [],
        {"AddressType": "IPv4", "Ports": "8080", "Endpoints": "10.1.0.1,10.1.0.2"},
        id="endpointslice",
    ),
    pytest.param(
        "networking.k8s.io",
        "Ingress",
        {
            "metadata": meta("web"),
            "spec": {
                "ingressClassName": "nginx",
                "rules": [{"host": "a.example.com"}, {"host": "b.example.com"}],
                "tls": [{"hosts": ["a.example.com"]}],
            },
            "status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.7"}]}},
        },
        ["Name", "Class", "Hosts", "Address", "Ports", "Age"],
        [],
        {
            "Class": "nginx",
            "Hosts": "a.example.com,b.example.com",
            "Address": "203.0.113.7",
            "Ports": "80, 443",
        },
        id="ingress",
    ),
    pytest.param(
        "networking.k8s.io",
        "IngressClass",
        {
            "metadata": meta("nginx", namespace=None),
            "spec": {
                "controller": "k8s.io/ingress-nginx",
                "parameters": {"apiGroup": "k8s.example.com", "kind": "Params", "name": "p"},
            },
        },
        ["Name", "Controller", "Parameters", "Age"],
        [],
        {"Controller": "k8s.io/ingress-nginx", "Parameters": "Params.k8s.example.com/p"},
        id="ingressclass",
    ),
    pytest.param(
        "networking.k8s.io",
        "NetworkPolicy",
        {"metadata": meta("deny-all"), "spec": {"podSelector": {}}},
        ["Name", "Pod-Selector", "Age"],
        [],
        {"Pod-Selector": "<none>"},
        id="networkpolicy",
    ),
]


@pytest.mark.parametrize(("group", "kind", "obj", "normal", "wide", "sample"), KIND_CASES)
def test_builtin_kind_columns_and_cells(
    group: str, kind: str, obj: Json, normal: list[str], wide: list[str], sample: dict[str, Any]
) -> None:
    check_columns_and_cells(group, kind, obj, normal, wide, sample)


@pytest.mark.parametrize(
    ("spec", "status", "expected"),
    [
        pytest.param(
            {"type": "ClusterIP", "clusterIP": "None"},
            {},
            ("None", "<none>", "<none>"),
            id="headless",
        ),
        pytest.param(
            {"type": "LoadBalancer", "clusterIP": "10.96.1.1", "ports": [{"port": 443}]},
            {},
            ("10.96.1.1", "<pending>", "443/TCP"),
            id="lb-pending",
        ),
        pytest.param(
            {"type": "LoadBalancer", "clusterIP": "10.96.1.1", "externalIPs": ["198.51.100.1"]},
            {"loadBalancer": {"ingress": [{"ip": "203.0.113.2"}, {"ip": "203.0.113.1"}]}},
            ("10.96.1.1", "203.0.113.1,203.0.113.2,198.51.100.1", "<none>"),
            id="lb-plus-external-ips",
        ),
        pytest.param(
            {"type": "ExternalName", "externalName": "db.example.com"},
            {},
            ("<none>", "db.example.com", "<none>"),
            id="external-name",
        ),
    ],
)
def test_service_cluster_and_external_ips(
    spec: Json, status: Json, expected: tuple[str, ...]
) -> None:
    row = row_by_name(
        render("", "Service", {"metadata": meta("svc"), "spec": spec, "status": status})
    )
    assert (row["Cluster-IP"], row["External-IP"], row["Port(s)"]) == expected


@pytest.mark.parametrize(
    ("conditions", "expected"),
    [
        pytest.param([{"type": "Ready", "status": "False"}], "NotReady", id="not-ready"),
        pytest.param(
            [{"type": "Ready", "status": "Unknown"}], "NotReady", id="unknown-reads-not-ready"
        ),
        pytest.param([], "Unknown", id="no-ready-condition"),
    ],
)
def test_node_status(conditions: list[Any], expected: str) -> None:
    node = {"metadata": meta("n", namespace=None), "status": {"conditions": conditions}}
    row = row_by_name(render("", "Node", node))
    assert (row["Status"], row["Roles"], row["OS-Image"]) == (expected, "<none>", "<unknown>")
