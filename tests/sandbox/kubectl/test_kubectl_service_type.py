"""A Service's type changed with kubectl as on a real API server: off NodePort, the node ports it
was given are dropped with the type (the server clears fields the new type cannot have); a node
port the change itself sets is still refused."""

from __future__ import annotations

import pytest

from tests.support.kubectl import Kubectl, KubectlError

pytestmark = pytest.mark.kubectl


def test_a_node_port_service_patched_to_cluster_ip_loses_its_node_ports(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    shared_kubectl("create", "service", "nodeport", "web", "--tcp=80:8080", "-n", namespace)
    given = shared_kubectl.json("get", "service", "web", "-n", namespace)["spec"]["ports"][0]
    assert 30000 <= given["nodePort"] <= 32767

    shared_kubectl("patch", "service", "web", "-n", namespace, "-p",
                   '{"spec": {"type": "ClusterIP"}}')  # fmt: skip

    spec = shared_kubectl.json("get", "service", "web", "-n", namespace)["spec"]
    assert spec["type"] == "ClusterIP"
    assert "nodePort" not in spec["ports"][0] and spec["ports"][0]["port"] == 80


def test_a_node_port_set_with_cluster_ip_is_refused(
    shared_kubectl: Kubectl, namespace: str
) -> None:
    shared_kubectl("create", "service", "nodeport", "api", "--tcp=80:8080", "-n", namespace)
    patch = '{"spec": {"type": "ClusterIP", "ports": [{"port": 80, "nodePort": 31999}]}}'

    with pytest.raises(KubectlError) as refused:
        shared_kubectl("patch", "service", "api", "-n", namespace, "-p", patch)

    assert "may not be used when `type` is 'ClusterIP'" in str(refused.value)
