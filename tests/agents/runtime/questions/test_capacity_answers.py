"""Capacity questions answered from the nodes and what their pods request, each in three
phrasings: which node is under pressure (a node condition forced by a sandbox fault), which
node runs the most pods, how much CPU is free, how full the cluster is; checked against the
cluster's own numbers, and never writing anything."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from core import quantity
from sandbox.server import Sandbox
from tests.support.kubectl import Kubectl
from tests.support.questions import Asked, Asker, writing_nothing
from tests.support.waiting import eventually


def pod(name: str, node: str, cpu: str) -> dict[str, object]:
    container = {"name": "c", "image": "nginx:1.27", "resources": {"requests": {"cpu": cpu}}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "load"},
        "spec": {"nodeName": node, "terminationGracePeriodSeconds": 1, "containers": [container]},
    }


@pytest.fixture(scope="module")
def kubectl(shared_sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    kubectl = Kubectl(shared_sandbox.kubeconfig, tmp_path_factory.mktemp("cache"))
    kubectl("create", "namespace", "load")
    pods = [pod(f"busy-{n}", "node-2", "1") for n in range(3)] + [pod("calm", "node-1", "500m")]
    kubectl(
        "apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": pods})
    )
    fault = {"kind": "node-condition", "node": "node-3", "type": "MemoryPressure", "status": "True"}
    shared_sandbox.call(lambda cluster: cluster.faults.add(fault))

    def settled() -> bool:
        phases = [
            p["status"].get("phase") for p in kubectl.json("get", "pods", "-n", "load")["items"]
        ]
        node = kubectl.json("get", "node", "node-3")
        pressed = any(
            c["type"] == "MemoryPressure" and c["status"] == "True"
            for c in node["status"]["conditions"]
        )
        return phases == ["Running"] * 4 and pressed

    eventually(settled, what="the load pods running and node-3 under memory pressure")
    return kubectl


@pytest.fixture(scope="module")
def asker(
    kubectl: Kubectl, shared_sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Asker]:
    home = tmp_path_factory.mktemp("home")
    yield from writing_nothing(Asker(shared_sandbox.kubeconfig, home, agent="cluster_operator"))


def ask(asker: Asker, text: str) -> Asked:
    asked = asker.ask(text)
    assert asked.answered is not None, f"{text!r} was not read as a question"
    assert asked.writes == [] and asked.data["family"] == "capacity", asked.text
    return asked


def requested_cpu(kubectl: Kubectl) -> dict[str, float]:
    """CPU requested per node, from every running pod, as the scheduler counts it."""
    sums: dict[str, float] = {}
    for item in kubectl.json("get", "pods", "-A")["items"]:
        node = item["spec"].get("nodeName")
        if node and item["status"].get("phase") not in ("Succeeded", "Failed"):
            for c in item["spec"]["containers"]:
                cpu = (c.get("resources") or {}).get("requests", {}).get("cpu")
                sums[node] = sums.get(node, 0.0) + quantity.amount(cpu)
    return sums


def allocatable_cpu(kubectl: Kubectl) -> dict[str, float]:
    return {
        n["metadata"]["name"]: quantity.amount(n["status"]["allocatable"]["cpu"])
        for n in kubectl.json("get", "nodes")["items"]
    }


@pytest.mark.parametrize(
    "text",
    [
        "which nodes are under pressure",
        "hey, is any node under memory pressure right now?",
        "which nodez are under presure",
    ],
)
def test_pressure_names_exactly_the_node_whose_condition_says_so(asker: Asker, text: str) -> None:
    asked = ask(asker, text)
    assert [r["node"] for r in asked.data["rows"]] == ["node-3"]
    assert "MemoryPressure=True" in asked.text and "Node node-3" in asked.text


@pytest.mark.parametrize(
    "text",
    [
        "which node has the most pods",
        "which of our nodes is running the most pods at the moment?",
        "wich nodes have the most pods",
    ],
)
def test_nodes_rank_by_the_pods_they_run(asker: Asker, kubectl: Kubectl, text: str) -> None:
    asked = ask(asker, text)
    counts: dict[str, int] = {}
    for item in kubectl.json("get", "pods", "-A")["items"]:
        node = item["spec"].get("nodeName")
        counts[node] = counts.get(node, 0) + 1
    rows = asked.data["rows"]
    assert rows[0]["node"] == max(counts, key=lambda n: counts[n]) == "node-2"
    assert {r["node"]: r["pods"] for r in rows} == {
        n: counts.get(n, 0) for n in ("node-1", "node-2", "node-3")
    }


@pytest.mark.parametrize(
    "text",
    [
        "how much cpu is free",
        "how much CPU do we have left on the nodes?",
        "how much cpu is avaliable",
    ],
)
def test_free_cpu_is_allocatable_minus_requests(asker: Asker, kubectl: Kubectl, text: str) -> None:
    asked = ask(asker, text)
    allocatable, requested = allocatable_cpu(kubectl), requested_cpu(kubectl)
    free = {n: allocatable[n] - requested.get(n, 0.0) for n in allocatable}
    assert asked.data["free"]["cpu"] == pytest.approx(sum(free.values()))
    rows = {r["node"]: r["free_cpu"] for r in asked.data["rows"]}
    assert rows == {n: f"{f:.2f} cores" for n, f in free.items()}
    assert asked.data["rows"][-1]["node"] == "node-2"  # the fullest last


@pytest.mark.parametrize(
    "text",
    [
        "how full is the cluster",
        "so how full are our nodes at the moment?",
        "what is the clustr utilization",
    ],
)
def test_fullness_is_the_share_of_allocatable_the_pods_request(
    asker: Asker, kubectl: Kubectl, text: str
) -> None:
    asked = ask(asker, text)
    allocatable, requested = allocatable_cpu(kubectl), requested_cpu(kubectl)
    share = round(100 * sum(requested.values()) / sum(allocatable.values()))
    assert asked.data["cluster"]["cpu"] == share
    assert asked.text.startswith(f"3 nodes; pods request {share}% of the CPU")
    assert "In use now" in asked.text  # the Cluster Operator has `top`
    assert "MemoryPressure=True" in asked.text  # a troubled node is said where it is listed
