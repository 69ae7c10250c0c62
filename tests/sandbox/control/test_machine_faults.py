"""Faults of the cloud behind the Cluster API provider, on a stopped clock: instances that fail
to come up, and nodes that join not ready until the fault is cleared."""

from __future__ import annotations

import pytest

from sandbox.faults import FaultSpecError
from tests.support.machine_pools import (
    machine_deployment_status,
    machines,
    merge_patch,
    node_ready,
    pool,
    pool_nodes,
    scale,
)
from tests.support.simulation import Simulation, condition


@pytest.fixture
def sim() -> Simulation:
    """A pool of one machine, joined and Ready."""
    sim = Simulation(nodes=0)
    sim.apply(pool(replicas=1))
    sim.run_for(60)
    return sim


def test_a_provisioning_fault_leaves_machines_failed_with_a_reason(sim: Simulation) -> None:
    fault = sim.cluster.faults.add({"kind": "machine-provision-fails", "deployment": "workers"})
    scale(sim, 2)
    sim.run_for(61)
    [failed] = machines(sim, phase="Failed")
    assert failed["status"]["failureReason"] == "CreateError"
    assert "InsufficientInstanceCapacity" in failed["status"]["failureMessage"]
    assert "nodeRef" not in failed["status"]
    assert len(pool_nodes(sim)) == 1
    status = machine_deployment_status(sim)
    assert (status["replicas"], status["readyReplicas"], status["phase"]) == (2, 1, "ScalingUp")
    assert sim.events_for(failed, reason="FailedCreate")
    sim.cluster.faults.clear(fault.id)
    sim.run_for(120)
    [still] = machines(sim, phase="Failed")  # terminal, as in Cluster API: delete to replace
    assert still["metadata"]["name"] == failed["metadata"]["name"]
    sim.delete("machines", "default", failed["metadata"]["name"])
    sim.run_for(61)
    assert len(pool_nodes(sim)) == 2 and machines(sim, phase="Failed") == []


def test_a_fault_for_another_pool_leaves_this_one_alone(sim: Simulation) -> None:
    sim.apply(
        {
            **pool()[2],
            "metadata": {"name": "gpus"},
            "spec": {**pool()[2]["spec"], "replicas": 0},
        }
    )
    sim.cluster.faults.add(
        {"kind": "machine-provision-fails", "deployment": "gpus", "message": "no A100 left"}
    )
    scale(sim, 2)
    scale(sim, 1, name="gpus")
    sim.run_for(61)
    [failed] = machines(sim, phase="Failed")
    assert failed["status"]["failureMessage"] == "no A100 left"
    assert failed["metadata"]["labels"]["cluster.x-k8s.io/deployment-name"] == "gpus"
    assert len(pool_nodes(sim)) == 2


def test_a_not_ready_join_fault_holds_the_new_node_not_ready_until_cleared(
    sim: Simulation,
) -> None:
    fault = sim.cluster.faults.add({"kind": "node-joins-not-ready", "deployment": "workers"})
    scale(sim, 3)
    sim.run_for(180)
    nodes = pool_nodes(sim)
    assert len(nodes) == 3
    [sick] = [n for n in nodes if not node_ready(n)]  # only the next one (count 1)
    ready = condition(sick, "Ready")
    assert ready is not None and ready["reason"] == "KubeletNotReady"
    assert "cni plugin not initialized" in ready["message"]
    assert any(t["key"] == "node.kubernetes.io/not-ready" for t in sick["spec"]["taints"])
    sick_name = sick["metadata"]["name"]
    [machine] = [m for m in machines(sim) if m["status"]["nodeRef"]["name"] == sick_name]
    assert machine["status"]["phase"] == "Running"
    healthy = condition(machine, "NodeHealthy")
    assert healthy is not None and healthy["status"] == "False"
    assert machine_deployment_status(sim)["readyReplicas"] == 2
    sim.cluster.faults.clear(fault.id)
    sim.run_for(15)
    assert all(node_ready(n) for n in pool_nodes(sim))
    assert machine_deployment_status(sim)["readyReplicas"] == 3


def test_a_not_ready_new_version_stalls_the_rollout(sim: Simulation) -> None:
    sim.cluster.faults.add({"kind": "node-joins-not-ready", "version": "v1.37.2", "count": 5})
    old = {m["metadata"]["name"] for m in machines(sim)}
    patch = {"spec": {"template": {"spec": {"version": "v1.37.2"}}}}
    merge_patch(sim, "machinedeployments", "workers", patch)
    sim.run_for(300)
    assert {m["metadata"]["name"] for m in machines(sim, phase="Running")} >= old
    [new] = [n for n in pool_nodes(sim) if n["status"]["nodeInfo"]["kubeletVersion"] == "v1.37.2"]
    assert not node_ready(new)
    status = machine_deployment_status(sim)
    assert (status["updatedReplicas"], status["availableReplicas"]) == (1, 1)


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        pytest.param({"kind": "node-joins-not-ready", "version": "1.37"}, "version", id="version"),
        pytest.param({"kind": "node-joins-not-ready", "count": 0}, "count", id="count-zero"),
        pytest.param({"kind": "node-joins-not-ready", "count": 1.5}, "count", id="count-half"),
        pytest.param(
            {"kind": "machine-provision-fails", "deployment": "nope"}, "deployment", id="no-pool"
        ),
        pytest.param(
            {"kind": "machine-provision-fails", "pool": "workers"}, "pool", id="unknown-field"
        ),
    ],
)
def test_malformed_cluster_api_faults_name_the_field(
    sim: Simulation, spec: dict[str, object], field: str
) -> None:
    with pytest.raises(FaultSpecError) as caught:
        sim.cluster.faults.add(spec)
    assert caught.value.field == field
