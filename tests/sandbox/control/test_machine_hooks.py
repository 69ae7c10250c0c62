"""Cluster API's deletion hooks on a stopped clock: a deleted Machine annotated
`pre-drain.delete.hook.machine.cluster.x-k8s.io/...` keeps its Node and pods until the last such
annotation goes, one annotated `pre-terminate.delete.hook...` is drained but keeps its Node, and a
version roll of a MachineDeployment waits on the hooks of its old Machines."""

from __future__ import annotations

from sandbox.store import Obj
from tests.support.machine_pools import (
    machines,
    merge_patch,
    node_ready,
    pool_nodes,
    ready_pool,
    running_web,
    scale,
    web,
)
from tests.support.simulation import Simulation, condition

NEW_VERSION = "v1.37.2"
PRE_DRAIN = "pre-drain.delete.hook.machine.cluster.x-k8s.io"
PRE_TERMINATE = "pre-terminate.delete.hook.machine.cluster.x-k8s.io"


def annotate(sim: Simulation, machine: Obj, annotations: dict[str, str | None]) -> None:
    patch = {"metadata": {"annotations": annotations}}
    merge_patch(sim, "machines", machine["metadata"]["name"], patch)


def machine(sim: Simulation, name: str) -> Obj | None:
    return sim.get("machines", "default", name)


def node_of(sim: Simulation, machine: Obj) -> Obj | None:
    return sim.get("nodes", "", machine["status"]["nodeRef"]["name"])


def web_on(sim: Simulation, node: str) -> list[str]:
    return [p["metadata"]["name"] for p in running_web(sim) if p["spec"]["nodeName"] == node]


def deleting_one(sim: Simulation, annotations: dict[str, str]) -> Obj:
    """Two Ready machines with a web pod each; the first, annotated, deleted by a scale-down."""
    sim.apply(web(2, spread=True))
    sim.run_until(lambda: len(running_web(sim)) == 2, timeout=120)
    victim = machines(sim)[0]
    annotate(sim, victim, {**annotations, "cluster.x-k8s.io/delete-machine": ""})
    scale(sim, 1)
    return victim


def test_a_pre_drain_hook_keeps_the_node_and_its_pods_until_removed() -> None:
    sim = ready_pool(2)
    hooks = {f"{PRE_DRAIN}/backup": "backup-operator", f"{PRE_DRAIN}/lb": "lb-operator"}
    victim = deleting_one(sim, hooks)
    name, node_name = victim["metadata"]["name"], victim["status"]["nodeRef"]["name"]
    pods = web_on(sim, node_name)
    assert pods
    sim.run_for(600)
    held = machine(sim, name)
    assert held is not None and held["status"]["phase"] == "Deleting"
    waiting = condition(held, "PreDrainDeleteHookSucceeded")
    assert waiting is not None and waiting["status"] == "False"
    assert (waiting["reason"], waiting["severity"]) == ("WaitingExternalHook", "Info")
    assert f"{PRE_DRAIN}/backup, {PRE_DRAIN}/lb" in waiting["message"]
    node = node_of(sim, held)
    assert node is not None and not node["spec"].get("unschedulable")
    assert web_on(sim, node_name) == pods
    assert not sim.events_for(held, reason="SuccessfulDrainNode")
    annotate(sim, held, {f"{PRE_DRAIN}/backup": None})
    sim.run_for(60)
    assert machine(sim, name) is not None and web_on(sim, node_name) == pods  # one hook left
    annotate(sim, held, {f"{PRE_DRAIN}/lb": None})
    sim.run_until(lambda: machine(sim, name) is None, timeout=120, what="the machine gone")
    assert sim.get("nodes", "", node_name) is None
    assert sim.events_for(held, reason="SuccessfulDrainNode")
    assert [n["metadata"]["name"] for n in pool_nodes(sim)] != [node_name]


def test_a_pre_terminate_hook_lets_the_drain_happen_but_keeps_the_node() -> None:
    sim = ready_pool(2)
    victim = deleting_one(sim, {f"{PRE_TERMINATE}/snapshot": "disk-operator"})
    name, node_name = victim["metadata"]["name"], victim["status"]["nodeRef"]["name"]
    sim.run_until(lambda: not web_on(sim, node_name), timeout=120, what="the node drained")
    sim.run_for(300)
    held = machine(sim, name)
    assert held is not None and held["status"]["phase"] == "Deleting"
    node = sim.get("nodes", "", node_name)
    assert node is not None and node["spec"]["unschedulable"] is True
    for kind, wanted in [
        ("PreDrainDeleteHookSucceeded", ("True", None)),
        ("DrainingSucceeded", ("True", None)),
        ("PreTerminateDeleteHookSucceeded", ("False", "WaitingExternalHook")),
    ]:
        found = condition(held, kind) or {}
        assert (found.get("status"), found.get("reason")) == wanted, kind
    assert len(sim.events_for(held, reason="SuccessfulDrainNode")) == 1  # drained once
    annotate(sim, held, {f"{PRE_TERMINATE}/snapshot": None})
    assert sim.get("nodes", "", node_name) is None
    sim.run_for(1)
    assert machine(sim, name) is None


def test_a_version_roll_stops_at_an_old_machine_holding_a_pre_drain_hook() -> None:
    sim = ready_pool(1)
    [old] = machines(sim)
    old_node = old["status"]["nodeRef"]["name"]
    annotate(sim, old, {f"{PRE_DRAIN}/migrate": "db-operator"})
    patch = {"spec": {"template": {"spec": {"version": NEW_VERSION}}}}
    merge_patch(sim, "machinedeployments", "workers", patch)
    sim.run_for(600)
    held = machine(sim, old["metadata"]["name"])
    assert held is not None and held["status"]["phase"] == "Deleting"
    nodes = {n["metadata"]["name"]: n for n in pool_nodes(sim)}
    assert len(nodes) == 2 and all(node_ready(n) for n in nodes.values())
    assert not nodes[old_node]["spec"].get("unschedulable")
    [new] = [n for name, n in nodes.items() if name != old_node]
    assert new["status"]["nodeInfo"]["kubeletVersion"] == NEW_VERSION
    annotate(sim, held, {f"{PRE_DRAIN}/migrate": None})
    sim.run_until(lambda: len(pool_nodes(sim)) == 1, timeout=120, what="the old node gone")
    assert [n["metadata"]["name"] for n in pool_nodes(sim)] == [new["metadata"]["name"]]
    assert [m["spec"]["version"] for m in machines(sim)] == [NEW_VERSION]


def test_held_machines_do_not_count_so_a_roll_goes_on_to_the_next_old_one() -> None:
    """As in Cluster API: a MachineSet counts Machines not being deleted, so each old Machine the
    roll deletes is replaced and the next one goes, each held by its own hook."""
    sim = ready_pool(2)
    first = machines(sim)
    for old in first:
        annotate(sim, old, {f"{PRE_DRAIN}/migrate": "db-operator"})
    patch = {"spec": {"template": {"spec": {"version": NEW_VERSION}}}}
    merge_patch(sim, "machinedeployments", "workers", patch)
    sim.run_for(600)
    assert {m["metadata"]["name"] for m in machines(sim, phase="Deleting")} == {
        m["metadata"]["name"] for m in first
    }
    assert len([n for n in pool_nodes(sim) if node_ready(n)]) == 4
    for old in first:
        annotate(sim, old, {f"{PRE_DRAIN}/migrate": None})
    sim.run_until(lambda: len(pool_nodes(sim)) == 2, timeout=120, what="the old nodes gone")
    assert {m["spec"]["version"] for m in machines(sim)} == {NEW_VERSION}
