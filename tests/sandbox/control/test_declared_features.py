"""Node Declared Features on a stopped clock: nodes declare what their kubelet version implements
(whether a scenario, a node pool or the kubelet's own status post put it there), and the
default-scheduler keeps a pod that needs a feature off the nodes that do not declare it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sandbox.kubelet.features import required_by
from sandbox.scenario import NodeSpec, ScenarioError, load
from sandbox.store import Obj
from tests.support import playing
from tests.support.machine_pools import machines, merge_patch, pool_nodes, ready_pool
from tests.support.simulation import Simulation, condition

OLDEST = "v1.35.4"
OLD = "v1.36.3"
NEW = "v1.37.0"
PRE_DECLARING: None = None  # what a kubelet before 1.36 publishes: no field at all
OLD_FEATURES = ["InPlacePodLevelResourcesVerticalScaling", "RestartAllContainersOnContainerExits"]
NEW_FEATURES = [*OLD_FEATURES, "VolumeBindMountOptions"]
MISSING = "node(s) didn't match Pod's required features"
NOSUID_MOUNT = {"name": "scratch", "mountPath": "/scratch", "bindMountOptions": ["nosuid"]}


def cluster_of(*nodes: tuple[str, str], only: tuple[str, ...] | None = None) -> Simulation:
    """A cluster whose nodes (name, kubelet version) registered as a scenario registers them."""
    sim = Simulation(nodes=0, only=only)
    now = sim.objects.clock.timestamp()
    sim.apply([NodeSpec(name, version=version).to_object(now=now) for name, version in nodes])
    return sim


def scheduler_only(*nodes: tuple[str, str]) -> Simulation:
    return cluster_of(*nodes, only=("default-scheduler",))


def declared(sim: Simulation, node: str) -> list[str] | None:
    found = sim.get("nodes", "", node)
    assert found is not None, node
    features: list[str] | None = found["status"].get("declaredFeatures")
    return features


def with_bind_mount_options(name: str, **container: Any) -> Obj:
    """A pod whose volume mount asks for noexec: it needs VolumeBindMountOptions."""
    mount = {"name": "scratch", "mountPath": "/scratch", "bindMountOptions": ["noexec"]}
    return playing.pod(
        name,
        {"name": "app", "image": "nginx:1.27", "volumeMounts": [mount], **container},
        volumes=[{"name": "scratch", "emptyDir": {}}],
    )


def restarting_all(name: str) -> Obj:
    """A pod that restarts all its containers when one exits 42: it needs
    RestartAllContainersOnContainerExits."""
    rule = {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}
    container = {
        "name": "app",
        "image": "nginx:1.27",
        "restartPolicy": "Never",
        "restartPolicyRules": [rule],
    }
    return playing.pod(name, container)


def node_of(sim: Simulation, name: str) -> str | None:
    found = sim.get("pods", "default", name)
    assert found is not None, name
    node = found["spec"].get("nodeName")
    return str(node) if node else None


def unschedulable_message(sim: Simulation, name: str) -> str:
    found = sim.get("pods", "default", name)
    assert found is not None, name
    scheduled = condition(found, "PodScheduled")
    assert scheduled is not None and scheduled["reason"] == "Unschedulable", scheduled
    return str(scheduled["message"])


# -- what nodes declare ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "features"),
    [(OLDEST, PRE_DECLARING), (OLD, OLD_FEATURES), (NEW, NEW_FEATURES), ("v1.38.1", NEW_FEATURES)],
    ids=["1.35-declares-nothing", "1.36", "1.37", "1.38"],
)
def test_a_node_declares_the_features_of_its_kubelet_version(
    version: str, features: list[str] | None
) -> None:
    sim = cluster_of(("worker", version))
    sim.run_for(60)  # a minute of heartbeats keeps what registration declared
    assert declared(sim, "worker") == features


def test_the_kubelet_puts_back_declared_features_someone_overwrote() -> None:
    sim = cluster_of(("worker", OLD))
    node = sim.get("nodes", "", "worker")
    assert node is not None
    wrong = {**node, "status": {**node["status"], "declaredFeatures": ["VolumeBindMountOptions"]}}
    sim.write("nodes", wrong, node, manager="someone")
    sim.run_for(1)
    assert declared(sim, "worker") == OLD_FEATURES


def test_an_upgrade_wave_gives_the_new_nodes_more_features_than_the_old() -> None:
    sim = ready_pool(2, version=OLD)
    assert [declared(sim, n["metadata"]["name"]) for n in pool_nodes(sim)] == [OLD_FEATURES] * 2
    merge_patch(
        sim, "machinedeployments", "workers", {"spec": {"template": {"spec": {"version": NEW}}}}
    )
    seen: set[tuple[str, tuple[str, ...]]] = set()

    def rolled() -> bool:
        nodes = pool_nodes(sim)
        for node in nodes:
            status = node["status"]
            seen.add((status["nodeInfo"]["kubeletVersion"], tuple(status["declaredFeatures"])))
        versions = {n["status"]["nodeInfo"]["kubeletVersion"] for n in nodes}
        return versions == {NEW} and len(machines(sim)) == 2

    sim.run_until(rolled, timeout=600, what="every node of the pool on the new version")
    assert seen == {(OLD, tuple(OLD_FEATURES)), (NEW, tuple(NEW_FEATURES))}


def test_a_scenario_node_takes_its_kubelet_version(tmp_path: Path) -> None:
    path = tmp_path / "mixed.yaml"
    path.write_text(
        "apiVersion: sandbox.kubecrew.io/v1alpha1\nkind: Scenario\nmetadata: {name: mixed}\n"
        f"spec:\n  nodes: [{{name: old, version: {OLD}}}, {{name: new}}]\n"
    )
    old, new = load(path).nodes or ()
    assert (old.version, new.version) == (OLD, None)
    registered = old.to_object(now="2026-06-01T12:00:00Z")
    info = registered["status"]["nodeInfo"]
    assert (info["kubeletVersion"], info["kubeProxyVersion"]) == (OLD, OLD)
    assert registered["status"]["declaredFeatures"] == OLD_FEATURES
    assert new.to_object(now="2026-06-01T12:00:00Z")["status"]["declaredFeatures"] == NEW_FEATURES


def test_a_scenario_node_version_must_be_a_kubernetes_release(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "apiVersion: sandbox.kubecrew.io/v1alpha1\nkind: Scenario\nmetadata: {name: bad}\n"
        "spec:\n  nodes: [{name: old, version: '1.36'}]\n"
    )
    with pytest.raises(ScenarioError) as caught:
        load(path)
    assert caught.value.field == "spec.nodes[0].version"
    assert "such as v1.37.2" in caught.value.reason


# -- what pods require -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "features"),
    [
        ({"containers": [{"name": "app", "image": "nginx"}]}, ()),
        (with_bind_mount_options("p")["spec"], ("VolumeBindMountOptions",)),
        (
            {
                "containers": [{"name": "app"}],
                "ephemeralContainers": [{"name": "debug", "volumeMounts": [NOSUID_MOUNT]}],
            },
            ("VolumeBindMountOptions",),
        ),
        (restarting_all("p")["spec"], ("RestartAllContainersOnContainerExits",)),
        (
            {
                "containers": [{"name": "app"}],
                "initContainers": [
                    {"name": "init", "restartPolicyRules": [{"action": "RestartAllContainers"}]}
                ],
            },
            ("RestartAllContainersOnContainerExits",),
        ),
        (
            {"containers": [{"name": "app", "restartPolicyRules": [{"action": "Restart"}]}]},
            (),
        ),
        ({"containers": [{"name": "app"}], "resources": {"limits": {"cpu": "1"}}}, ()),
    ],
    ids=[
        "plain",
        "bind-mount-options",
        "ephemeral-bind-mount-options",
        "restart-all",
        "init-restart-all",
        "plain-restart-rule",
        "pod-level-resources",
    ],
)
def test_a_pod_requires_the_features_its_spec_uses(
    spec: dict[str, Any], features: tuple[str, ...]
) -> None:
    assert required_by(spec) == features


# -- scheduling --------------------------------------------------------------------------------


def test_a_pod_needing_the_newest_feature_lands_only_on_the_newest_node() -> None:
    sim = scheduler_only(("old-1", OLD), ("new", NEW), ("old-2", OLD))
    sim.apply([with_bind_mount_options(f"strict-{i}") for i in range(4)])
    assert [node_of(sim, f"strict-{i}") for i in range(4)] == ["new"] * 4


def test_a_pod_needing_a_1_36_feature_never_lands_on_a_node_that_declares_nothing() -> None:
    sim = scheduler_only(("oldest", OLDEST), ("old", OLD), ("new", NEW))
    sim.apply([restarting_all(f"restarter-{i}") for i in range(6)])
    placed = {node_of(sim, f"restarter-{i}") for i in range(6)}
    assert placed == {"old", "new"}


def test_a_pod_needing_nothing_special_lands_on_nodes_of_every_version() -> None:
    sim = scheduler_only(("oldest", OLDEST), ("old", OLD), ("new", NEW))
    sim.apply([playing.pod(f"plain-{i}") for i in range(6)])
    assert {node_of(sim, f"plain-{i}") for i in range(6)} == {"oldest", "old", "new"}


def test_a_pod_no_node_can_serve_stays_pending_until_a_node_declares_its_feature() -> None:
    sim = scheduler_only(("oldest", OLDEST), ("old-1", OLD), ("old-2", OLD))
    sim.apply(with_bind_mount_options("strict"))
    sim.run_for(5)
    assert node_of(sim, "strict") is None
    message = (
        f"0/3 nodes are available: 3 {MISSING}. "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    assert unschedulable_message(sim, "strict") == message
    pod = sim.get("pods", "default", "strict")
    assert pod is not None
    [event] = sim.events_for(pod, reason="FailedScheduling")
    assert event["message"] == message and event["type"] == "Warning"
    now = sim.objects.clock.timestamp()
    sim.apply(NodeSpec("new", version=NEW).to_object(now=now))
    assert node_of(sim, "strict") == "new"


def test_a_pending_pod_is_retried_as_soon_as_a_node_declares_what_it_needs() -> None:
    sim = scheduler_only(("new", NEW))
    node = sim.get("nodes", "", "new")
    assert node is not None
    stripped = {**node, "status": {**node["status"], "declaredFeatures": OLD_FEATURES}}
    node = sim.write("nodes", stripped, node, manager="kubelet")
    sim.apply(with_bind_mount_options("strict"))
    assert node_of(sim, "strict") is None
    restored = {**node, "status": {**node["status"], "declaredFeatures": NEW_FEATURES}}
    sim.write("nodes", restored, node, manager="kubelet")  # settles; no retry timer is due
    assert node_of(sim, "strict") == "new"


def test_a_missing_feature_is_counted_apart_from_what_preemption_could_free() -> None:
    sim = scheduler_only(("old", OLD), ("new", NEW))
    sim.apply(playing.pod("hog", _asking("15Gi"), node="new"))
    sim.apply(with_bind_mount_options("strict", resources={"requests": {"memory": "2Gi"}}))
    assert node_of(sim, "strict") is None
    assert unschedulable_message(sim, "strict") == (
        f"0/2 nodes are available: 1 Insufficient memory, 1 {MISSING}. "
        "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, "
        "1 Preemption is not helpful for scheduling."
    )


def _asking(memory: str) -> dict[str, Any]:
    return {"name": "app", "image": "nginx:1.27", "resources": {"requests": {"memory": memory}}}
