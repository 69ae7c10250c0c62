"""A node pool's size asked in words ("add 2 nodes to the workers pool", "remove a node from
wrkers pool", "scale the workers pool to 0") reaches the Cluster Operator's one way of changing
things: the pool named against the cluster's Cluster API MachineDeployments, the count made
absolute from the live one, the gated write, and validation that waits for the new machines'
nodes to join Ready; taking a pool to zero is asked back first. Checked on the Nodes the API
server holds."""

from __future__ import annotations

import json

from sandbox.server import Sandbox
from tests.support.cluster_operator import Operator
from tests.support.kubectl import Kubectl
from tests.support.machine_pools import POOL_LABEL, pool
from tests.support.waiting import eventually


def ready_nodes(kubectl: Kubectl) -> int:
    nodes = kubectl.json("get", "nodes", "-l", f"{POOL_LABEL}=workers")["items"]
    return sum(
        1
        for node in nodes
        for c in node["status"].get("conditions") or []
        if c["type"] == "Ready" and c["status"] == "True"
    )


def replicas(kubectl: Kubectl) -> int:
    return int(kubectl.json("get", "machinedeployment", "workers")["spec"]["replicas"])


def test_a_pool_grows_and_shrinks_as_asked_and_zero_is_asked_back(
    sandbox: Sandbox, kubectl: Kubectl, operator: Operator
) -> None:
    for obj in pool(replicas=1, provision_seconds=5):
        kubectl("apply", "-f", "-", input=json.dumps(obj))
    eventually(lambda: ready_nodes(kubectl) == 1, what="the pool's first node Ready")

    grown = operator.ask("add 2 nodes to the workers pool")

    assert grown.data.get("outcome") == "done", grown.answer
    assert replicas(kubectl) == 3 and ready_nodes(kubectl) == 3, grown.answer
    assert "3 of 3 replicas available" in grown.answer, grown.answer

    shrunk = operator.ask("please remove a node from the wrkers pool")
    assert shrunk.data.get("outcome") == "done", shrunk.answer
    assert replicas(kubectl) == 2
    eventually(lambda: ready_nodes(kubectl) == 2, what="one node drained and gone")

    emptied = operator.ask("scale the workers pool to 0")
    assert "every node of the pool is drained and removed" in emptied.answer, emptied.answer
    assert "reply 'yes'" in emptied.answer
    assert replicas(kubectl) == 2  # asked back: nothing changed yet
    written = [r.summary.split(" under proposal ")[0] for r in operator.mutations()]
    assert written == [
        "scale: scale MachineDeployment default/workers 1 -> 3 replicas directly",
        "scale: scale MachineDeployment default/workers 3 -> 2 replicas directly",
    ], written


def test_a_cluster_without_node_pools_says_so(operator: Operator) -> None:
    outcome = operator.ask("add 2 nodes to the workers pool")
    assert outcome.answer.startswith("This cluster has no node pools I can size"), outcome.answer
    assert operator.mutations() == []


def test_a_pool_that_does_not_exist_is_asked_about(kubectl: Kubectl, operator: Operator) -> None:
    for obj in pool(replicas=1, provision_seconds=5):
        kubectl("apply", "-f", "-", input=json.dumps(obj))

    outcome = operator.ask("add a node to the gpu pool")

    assert outcome.answer.startswith("Which node pool?"), outcome.answer
    assert "the pools are: workers" in outcome.answer
    assert replicas(kubectl) == 1 and operator.mutations() == []
