"""Real kubectl managing a node pool through Cluster API objects: `kubectl get md` prints Cluster
API's columns, `kubectl scale md/...` goes through the scale subresource, and the sandbox's
provider makes the Nodes join a few (sandbox) seconds later.

Each test works in its own namespace of the module's shared sandbox, with a pool named after
the namespace, so the Nodes it adds are told apart by their pool label.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.sandbox.kubectl.suite import create, header, rows
from tests.support.kubectl import Kubectl
from tests.support.machine_pools import POOL_LABEL, cluster, machine_deployment, template
from tests.support.waiting import eventually

pytestmark = pytest.mark.kubectl

VERSION = "v1.37.2"


def in_namespace(obj: dict[str, Any], namespace: str) -> dict[str, Any]:
    return {**obj, "metadata": {**obj["metadata"], "namespace": namespace}}


def node_pool(kubectl: Kubectl, namespace: str, *, replicas: int) -> str:
    """A Cluster, a template whose nodes join 5 s after their Machine, and a MachineDeployment
    named after the namespace; returns its name."""
    name = namespace[-20:].strip("-")
    objects = [
        cluster(),
        template(provision_seconds=5),
        machine_deployment(name, replicas=replicas, version=VERSION),
    ]
    create(kubectl, *(in_namespace(obj, namespace) for obj in objects))
    return name


def ready_nodes(kubectl: Kubectl, pool: str) -> list[dict[str, str]]:
    table = rows(kubectl("get", "nodes", "-l", f"{POOL_LABEL}={pool}"))
    return [row for row in table if row["STATUS"] == "Ready"]


def test_scale_machine_deployment_adds_nodes(shared_kubectl: Kubectl, namespace: str) -> None:
    pool = node_pool(shared_kubectl, namespace, replicas=1)
    eventually(lambda: len(ready_nodes(shared_kubectl, pool)) == 1, timeout=30, what="one node")
    table = shared_kubectl("get", "md", "-n", namespace)
    assert header(table) == [
        "NAME",
        "CLUSTER",
        "REPLICAS",
        "READY",
        "UPDATED",
        "UNAVAILABLE",
        "PHASE",
        "AGE",
        "VERSION",
    ]
    [row] = rows(table)
    assert row | {"AGE": ""} == {
        "NAME": pool,
        "CLUSTER": "prod",
        "REPLICAS": "1",
        "READY": "1",
        "UPDATED": "1",
        "UNAVAILABLE": "0",
        "PHASE": "Running",
        "AGE": "",
        "VERSION": VERSION,
    }
    scaled = shared_kubectl("scale", f"md/{pool}", "--replicas=3", "-n", namespace)
    assert scaled == f"machinedeployment.cluster.x-k8s.io/{pool} scaled\n"
    nodes = eventually(
        lambda: (found := ready_nodes(shared_kubectl, pool)) and len(found) == 3 and found,
        timeout=30,
        what="three Ready nodes in the pool",
    )
    assert {node["VERSION"] for node in nodes} == {VERSION}


def test_get_cluster_api_lists_the_pools_objects(shared_kubectl: Kubectl, namespace: str) -> None:
    pool = node_pool(shared_kubectl, namespace, replicas=1)
    eventually(lambda: len(ready_nodes(shared_kubectl, pool)) == 1, timeout=30, what="one node")
    listed = shared_kubectl("get", "cluster-api", "-n", namespace, "-o", "name").split()
    kinds = sorted({entry.split("/")[0] for entry in listed})
    assert kinds == [
        "cluster.cluster.x-k8s.io",
        "machine.cluster.x-k8s.io",
        "machinedeployment.cluster.x-k8s.io",
        "machineset.cluster.x-k8s.io",
        "sandboxmachinetemplate.infrastructure.cluster.x-k8s.io",
    ]
    [machine] = rows(shared_kubectl("get", "ma", "-n", namespace, "-o", "wide"))
    assert machine["PHASE"] == "Running" and machine["NODENAME"] == machine["NAME"]
    assert machine["PROVIDERID"] == f"sandbox://{machine['NAME']}"
    [machine_set] = rows(shared_kubectl("get", "ms", "-n", namespace))
    assert (machine_set["READY"], machine_set["AVAILABLE"]) == ("1", "1")
