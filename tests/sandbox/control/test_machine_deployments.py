"""Node pools through Cluster API on a stopped clock: a MachineDeployment scales and rolls its
Machines, and the sandbox's provider turns them into Nodes after `provisionSeconds` and drains
them (within PodDisruptionBudgets) before they go. The whole control plane runs.
"""

from __future__ import annotations

import re

from tests.support.machine_pools import (
    machine_deployment_status,
    machines,
    merge_patch,
    node_ready,
    pool,
    pool_nodes,
    ready_pool,
    running_web,
    scale,
    web,
)
from tests.support.simulation import Simulation, condition

NEW_VERSION = "v1.37.2"


def test_scaling_up_adds_nodes_only_after_provision_seconds() -> None:
    sim = ready_pool(2)
    scale(sim, 4)
    assert len(machines(sim, phase="Provisioning")) == 2
    sim.run_for(59)
    assert len(pool_nodes(sim)) == 2
    assert machine_deployment_status(sim)["phase"] == "ScalingUp"
    sim.run_for(1)
    nodes = pool_nodes(sim)
    assert len(nodes) == 4 and all(node_ready(n) for n in nodes)
    status = machine_deployment_status(sim)
    assert (status["replicas"], status["readyReplicas"], status["phase"]) == (4, 4, "Running")
    for machine in machines(sim):
        node = machine["status"]["nodeRef"]["name"]
        assert machine["spec"]["providerID"] == f"sandbox://{machine['metadata']['name']}"
        assert sim.get("nodes", "", node) is not None


def test_a_joined_node_has_the_templates_shape_and_the_machines_version() -> None:
    taint = {"key": "gpu", "value": "true", "effect": "NoSchedule"}
    shape = {"cpu": "32", "memory": "256Gi", "gpus": 8, "kernelVersion": "6.8.0-gpu"}
    sim = ready_pool(1, labels={"gpu": "a100"}, taints=[taint], **shape)
    [node] = pool_nodes(sim)
    assert node["status"]["capacity"] | {"ephemeral-storage": ""} == {
        "cpu": "32",
        "memory": "256Gi",
        "pods": "110",
        "nvidia.com/gpu": "8",
        "ephemeral-storage": "",
    }
    assert node["metadata"]["labels"]["gpu"] == "a100"
    assert node["metadata"]["labels"]["node.kubernetes.io/instance-type"] == "standard"
    assert taint in node["spec"]["taints"]
    info = node["status"]["nodeInfo"]
    assert (info["kubeletVersion"], info["kernelVersion"]) == ("v1.37.0", "6.8.0-gpu")
    [machine] = machines(sim)
    annotations = node["metadata"]["annotations"]
    assert annotations["cluster.x-k8s.io/machine"] == machine["metadata"]["name"]
    assert machine["status"]["nodeRef"]["name"] == node["metadata"]["name"]
    assert sim.events_for(machine, reason="SuccessfulSetNodeRef")


def test_scaling_down_drains_and_removes_nodes() -> None:
    sim = ready_pool(3)
    sim.apply(web(3))
    sim.run_until(lambda: len(running_web(sim)) == 3, timeout=120)
    scale(sim, 1)
    assert len(machines(sim, phase="Deleting")) == 2
    sim.run_until(lambda: len(machines(sim)) == 1, timeout=300, what="machines gone")
    [kept] = pool_nodes(sim)
    assert len(sim.list("nodes")) == 1
    sim.run_until(lambda: len(running_web(sim)) == 3, timeout=300, what="web back to 3")
    assert {p["spec"]["nodeName"] for p in running_web(sim)} == {kept["metadata"]["name"]}
    set_events = [e for e in sim.list("events") if e["reason"] == "SuccessfulDrainNode"]
    assert len(set_events) == 2
    assert machine_deployment_status(sim)["replicas"] == 1


def test_a_version_change_rolls_every_machine_without_losing_a_ready_node() -> None:
    sim = ready_pool(2)
    first = {m["metadata"]["name"] for m in machines(sim)}
    merge_patch(
        sim,
        "machinedeployments",
        "workers",
        {"spec": {"template": {"spec": {"version": NEW_VERSION}}}},
    )

    def rolled() -> bool:
        nodes = pool_nodes(sim)
        assert len([n for n in nodes if node_ready(n)]) >= 2, "fewer Ready nodes than replicas"
        staying = [m for m in machines(sim) if not m["metadata"].get("deletionTimestamp")]
        assert len(staying) <= 3, "more machines than replicas + maxSurge"
        versions = {n["status"]["nodeInfo"]["kubeletVersion"] for n in nodes}
        return len(nodes) == 2 and versions == {NEW_VERSION} and len(machines(sim)) == 2

    sim.run_until(rolled, timeout=600, what="every node on the new version")
    assert not first & {m["metadata"]["name"] for m in machines(sim)}
    status = machine_deployment_status(sim)
    assert (status["updatedReplicas"], status["readyReplicas"], status["phase"]) == (
        2,
        2,
        "Running",
    )
    assert all(m["spec"]["version"] == NEW_VERSION for m in machines(sim))
    assert len(sim.list("machinesets")) == 2  # the old one kept, empty (revisionHistoryLimit 1)


def test_a_budget_allowing_no_disruption_blocks_the_drain_until_relaxed() -> None:
    sim = ready_pool(2)
    sim.apply(web(2, spread=True))
    sim.run_until(lambda: len(running_web(sim)) == 2, timeout=120)
    sim.apply(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "web"},
            "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}},
        }
    )
    pods_before = {p["metadata"]["name"] for p in running_web(sim)}
    first = {m["metadata"]["name"] for m in machines(sim)}
    merge_patch(
        sim,
        "machinedeployments",
        "workers",
        {"spec": {"template": {"spec": {"version": NEW_VERSION}}}},
    )
    sim.run_until(lambda: machines(sim, phase="Deleting"), timeout=120, what="an old machine goes")
    sim.run_for(120)
    stuck = machines(sim, phase="Deleting")
    assert stuck and all(m["metadata"]["name"] not in first for m in machines(sim, phase="Running"))
    for machine in stuck:
        node = sim.get("nodes", "", machine["status"]["nodeRef"]["name"])
        assert node is not None and node["spec"]["unschedulable"] is True
        draining = condition(machine, "DrainingSucceeded")
        assert draining is not None and draining["reason"] == "DrainingFailed"
        [refused] = sim.events_for(machine, reason="FailedDrainNode")
        assert "disruption budget" in refused["message"] and refused["count"] > 1
    assert {p["metadata"]["name"] for p in running_web(sim)} == pods_before
    sim.patch("poddisruptionbudgets", "default", "web", {"spec": {"minAvailable": 1}})
    sim.run_until(
        lambda: not first & {m["metadata"]["name"] for m in machines(sim)},
        timeout=600,
        what="the drained machines gone",
    )
    assert all(sim.events_for(m, reason="SuccessfulDrainNode") for m in stuck)
    sim.run_until(
        lambda: (
            {n["status"]["nodeInfo"]["kubeletVersion"] for n in pool_nodes(sim)} == {NEW_VERSION}
            and len(pool_nodes(sim)) == 2
        ),
        timeout=600,
        what="the rollout finished",
    )


def test_an_annotated_machine_skips_the_drain() -> None:
    sim = ready_pool(2)
    sim.apply(web(2, spread=True))
    sim.run_until(lambda: len(running_web(sim)) == 2, timeout=120)
    victim = machines(sim)[0]
    name = victim["metadata"]["name"]
    annotations = {
        "machine.cluster.x-k8s.io/exclude-node-draining": "",
        "cluster.x-k8s.io/delete-machine": "",
    }
    merge_patch(sim, "machines", name, {"metadata": {"annotations": annotations}})
    scale(sim, 1)
    sim.run_for(5)
    assert sim.get("machines", "default", name) is None
    assert sim.get("nodes", "", victim["status"]["nodeRef"]["name"]) is None
    assert not sim.events_for(victim, reason="SuccessfulDrainNode")
    assert all(p["spec"].get("nodeName") != name for p in sim.pods(app="web"))


def test_machine_names_repeat_from_the_worlds_seed() -> None:
    def names(seed: int) -> list[str]:
        sim = Simulation(nodes=0, seed=seed)
        sim.apply(pool(replicas=3))
        return sorted(m["metadata"]["name"] for m in machines(sim))

    first = names(7)
    assert first == names(7) != names(8)
    assert all(re.fullmatch(r"workers-[a-z0-9]+-[a-z0-9]{5}", name) for name in first)
