"""The default-scheduler on a stopped clock: where pods land, and how it says why they cannot."""

from __future__ import annotations

from typing import Any

import pytest

from sandbox.store import Obj
from tests.support import playing
from tests.support.simulation import Simulation, condition

NVIDIA = "nvidia.com/gpu"


def pod(
    name: str, *, cpu: str = "", memory: str = "", labels: dict[str, str] | None = None, **spec: Any
) -> Obj:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
    container: dict[str, Any] = {"name": "app", "image": "nginx:1.27"}
    if requests:
        container["resources"] = {"requests": requests}
    return playing.pod(name, container, metadata={"labels": labels or {}}, **spec)


def node_of(sim: Simulation, name: str) -> str | None:
    found = sim.get("pods", "default", name)
    assert found is not None
    node = found["spec"].get("nodeName")
    return str(node) if node else None


def unschedulable_message(sim: Simulation, name: str) -> str:
    found = sim.get("pods", "default", name)
    assert found is not None
    scheduled = condition(found, "PodScheduled")
    assert scheduled is not None and scheduled["status"] == "False", scheduled
    assert scheduled["reason"] == "Unschedulable"
    return str(scheduled["message"])


def label_node(sim: Simulation, node: str, **labels: str) -> None:
    sim.patch("nodes", "", node, {"metadata": {"labels": labels}})


def taint_node(sim: Simulation, node: str, *taints: dict[str, str]) -> None:
    sim.patch("nodes", "", node, {"spec": {"taints": list(taints)}})


def test_a_pending_pod_is_bound_with_a_scheduled_condition_and_event() -> None:
    sim = Simulation(nodes=3)
    sim.apply(pod("web", cpu="100m", memory="64Mi"))
    found = sim.get("pods", "default", "web")
    assert found is not None
    node = found["spec"]["nodeName"]
    assert node in {"node-1", "node-2", "node-3"}
    scheduled = condition(found, "PodScheduled")
    assert scheduled is not None and scheduled["status"] == "True"
    [event] = sim.events_for(found, reason="Scheduled")
    assert event["message"] == f"Successfully assigned default/web to {node}"
    assert event["source"]["component"] == "default-scheduler"


def test_insufficient_memory_is_reported_per_node_with_the_preemption_verdict() -> None:
    sim = Simulation(nodes=3)
    for i in range(3):
        sim.apply(pod(f"big-{i}", memory="10Gi"))
    sim.apply(pod("one-more", memory="10Gi"))
    assert sorted(node_of(sim, f"big-{i}") or "" for i in range(3)) == [
        "node-1",
        "node-2",
        "node-3",
    ]
    assert node_of(sim, "one-more") is None
    message = unschedulable_message(sim, "one-more")
    assert message == (
        "0/3 nodes are available: 3 Insufficient memory. preemption: 0/3 nodes are available: "
        "3 No preemption victims found for incoming pod."
    )
    found = sim.get("pods", "default", "one-more")
    assert found is not None
    [event] = sim.events_for(found, reason="FailedScheduling")
    assert event["type"] == "Warning" and event["message"] == message


def test_cpu_and_memory_shortfalls_are_both_counted() -> None:
    sim = Simulation(nodes=2)
    sim.apply(pod("huge", cpu="5", memory="20Gi"))
    assert unschedulable_message(sim, "huge").startswith(
        "0/2 nodes are available: 2 Insufficient cpu, 2 Insufficient memory. "
    )


def test_init_containers_count_by_their_peak_not_their_sum() -> None:
    sim = Simulation(nodes=1)
    spec = pod("init", cpu="1")
    spec["spec"]["initContainers"] = [
        {"name": f"i{n}", "image": "busybox:1.36", "resources": {"requests": {"cpu": "3"}}}
        for n in range(2)
    ]
    sim.apply(spec)  # effective request max(1, 3) = 3 of 4 CPUs
    assert node_of(sim, "init") == "node-1"
    sim.apply(pod("second", cpu="1500m"))
    assert "1 Insufficient cpu" in unschedulable_message(sim, "second")


def test_extended_resources_must_be_allocatable() -> None:
    sim = Simulation(nodes=2)
    node = sim.get("nodes", "", "node-2")
    assert node is not None
    allocatable = {**node["status"]["allocatable"], NVIDIA: "1"}  # as a device plugin reports
    sim.write("nodes", {**node, "status": {**node["status"], "allocatable": allocatable}}, node)
    gpu = pod("train")
    gpu["spec"]["containers"][0]["resources"] = {"limits": {NVIDIA: "1"}}
    sim.apply(gpu)
    assert node_of(sim, "train") == "node-2"
    second = pod("train-2")
    second["spec"]["containers"][0]["resources"] = {"limits": {NVIDIA: "1"}}
    sim.apply(second)
    assert unschedulable_message(sim, "train-2").startswith(
        "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. "
    )


def test_node_selector_restricts_the_nodes() -> None:
    sim = Simulation(nodes=3)
    label_node(sim, "node-3", disktype="ssd")
    sim.apply(pod("db", nodeSelector={"disktype": "ssd"}))
    assert node_of(sim, "db") == "node-3"
    sim.apply(pod("nowhere", nodeSelector={"disktype": "nvme"}))
    assert unschedulable_message(sim, "nowhere") == (
        "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )


def required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}
        }
    }


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        ({"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}, "node-2"),
        (
            {"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a", "b"]}]},
            "node-3",
        ),
        ({"matchExpressions": [{"key": "gen", "operator": "Gt", "values": ["4"]}]}, "node-1"),
        ({"matchExpressions": [{"key": "gen", "operator": "DoesNotExist"}]}, "node-3"),
        (
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-2"]}]},
            "node-2",
        ),
    ],
    ids=["in", "not-in", "gt", "does-not-exist", "match-fields"],
)
def test_required_node_affinity_operators(term: dict[str, Any], expected: str) -> None:
    sim = Simulation(nodes=3)
    label_node(sim, "node-1", zone="a", gen="5")
    label_node(sim, "node-2", zone="b", gen="3")
    sim.apply(pod("picky", affinity=required(term)))
    assert node_of(sim, "picky") == expected


def test_taints_keep_pods_away_unless_tolerated() -> None:
    sim = Simulation(nodes=2)
    for node in ("node-1", "node-2"):
        taint_node(sim, node, {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"})
    sim.apply(pod("plain"))
    assert unschedulable_message(sim, "plain") == (
        "0/2 nodes are available: 2 node(s) had untolerated taint {dedicated: gpu}. "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )
    toleration = {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
    sim.apply(pod("tolerant", tolerations=[toleration]))
    assert node_of(sim, "tolerant") in {"node-1", "node-2"}
    sim.apply(pod("everything", tolerations=[{"operator": "Exists"}]))
    assert node_of(sim, "everything") is not None


def test_prefer_no_schedule_taints_only_steer() -> None:
    sim = Simulation(nodes=2)
    taint_node(sim, "node-1", {"key": "spot", "effect": "PreferNoSchedule"})
    for i in range(4):
        sim.apply(pod(f"p{i}"))
    assert {node_of(sim, f"p{i}") for i in range(4)} == {"node-2"}


def test_a_cordoned_node_is_skipped_and_uncordoning_schedules_the_waiting_pod() -> None:
    sim = Simulation(nodes=1)
    sim.patch("nodes", "", "node-1", {"spec": {"unschedulable": True}})
    sim.apply(pod("waiting"))
    assert unschedulable_message(sim, "waiting").startswith(
        "0/1 nodes are available: 1 node(s) were unschedulable. "
    )
    sim.patch("nodes", "", "node-1", {"spec": {"unschedulable": None}})
    assert node_of(sim, "waiting") == "node-1"


def test_a_pending_pod_is_scheduled_once_a_pod_is_deleted() -> None:
    sim = Simulation(nodes=1)
    sim.apply(pod("first", cpu="3"))
    sim.apply(pod("second", cpu="3"))
    assert node_of(sim, "second") is None
    sim.delete("pods", "default", "first", grace_period=0)
    assert node_of(sim, "second") == "node-1"


def test_unschedulable_pods_are_retried_every_minute_and_events_fold() -> None:
    sim = Simulation(nodes=1)
    sim.apply(pod("greedy", cpu="8"))
    sim.run_for(125)
    found = sim.get("pods", "default", "greedy")
    assert found is not None
    [event] = sim.events_for(found, reason="FailedScheduling")
    assert event["count"] == 3


def anti_affinity(app: str) -> dict[str, Any]:
    term = {
        "labelSelector": {"matchLabels": {"app": app}},
        "topologyKey": "kubernetes.io/hostname",
    }
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def test_anti_affinity_spreads_three_replicas_and_refuses_a_fourth() -> None:
    sim = Simulation(nodes=3)
    for i in range(4):
        sim.apply(pod(f"cache-{i}", labels={"app": "cache"}, affinity=anti_affinity("cache")))
    assert sorted(node_of(sim, f"cache-{i}") or "" for i in range(3)) == [
        "node-1",
        "node-2",
        "node-3",
    ]
    assert unschedulable_message(sim, "cache-3") == (
        "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. "
        "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
    )


def test_existing_pods_anti_affinity_keeps_matching_pods_away() -> None:
    sim = Simulation(nodes=2)
    sim.apply(
        pod(
            "loner",
            labels={"app": "loner"},
            affinity=anti_affinity("noisy"),
            nodeSelector={"kubernetes.io/hostname": "node-1"},
        )
    )
    for i in range(3):
        sim.apply(pod(f"noisy-{i}", labels={"app": "noisy"}))
    assert {node_of(sim, f"noisy-{i}") for i in range(3)} == {"node-2"}


def test_pod_affinity_follows_the_pods_it_selects() -> None:
    sim = Simulation(nodes=3)
    term = {
        "labelSelector": {"matchLabels": {"app": "db"}},
        "topologyKey": "kubernetes.io/hostname",
    }
    with_db = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    sim.apply(pod("sidecar", affinity=with_db))
    assert unschedulable_message(sim, "sidecar").startswith(
        "0/3 nodes are available: 3 node(s) didn't match pod affinity rules. "
    )
    sim.apply(pod("db", labels={"app": "db"}))
    assert node_of(sim, "sidecar") == node_of(sim, "db") is not None


def test_replicas_of_one_owner_spread_over_the_nodes() -> None:
    sim = Simulation(nodes=3)
    owner = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "name": "ghost",
        "uid": "u-1",
        "controller": True,
    }
    for i in range(9):
        replica = pod(f"r{i}", cpu="10m")
        replica["metadata"]["ownerReferences"] = [owner]
        sim.apply(replica)
    nodes = [node_of(sim, f"r{i}") for i in range(9)]
    assert sorted(nodes.count(n) for n in ("node-1", "node-2", "node-3")) == [3, 3, 3]


def test_scheduling_gates_hold_a_pod_back() -> None:
    sim = Simulation(nodes=1)
    sim.apply(pod("gated", schedulingGates=[{"name": "example.com/quota"}]))
    found = sim.get("pods", "default", "gated")
    assert found is not None and not found["spec"].get("nodeName")
    scheduled = condition(found, "PodScheduled")
    assert scheduled is not None and scheduled["reason"] == "SchedulingGated"


def test_pods_of_another_scheduler_are_left_alone() -> None:
    sim = Simulation(nodes=1)
    sim.apply(pod("custom", schedulerName="my-scheduler"))
    assert node_of(sim, "custom") is None
    found = sim.get("pods", "default", "custom")
    assert found is not None and condition(found, "PodScheduled") is None


# -- volumes ---------------------------------------------------------------------------------------


def claim(name: str, *, storage_class: str | None = None) -> Obj:
    spec: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "1Gi"}},
    }
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": spec,
    }


def with_claim(name: str, claim_name: str) -> Obj:
    found = pod(name)
    found["spec"]["volumes"] = [
        {"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}
    ]
    return found


def bind_claim_by_hand(sim: Simulation, name: str) -> None:
    """Play the persistentvolume-controller: a volume exists for the claim and both are Bound."""
    old = sim.get("persistentvolumeclaims", "default", name)
    assert old is not None
    volume = f"pvc-{name}"
    sim.apply(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": volume},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "hostPath": {"path": f"/tmp/{volume}"},
                "storageClassName": old["spec"].get("storageClassName", ""),
                "claimRef": {"namespace": "default", "name": name, "uid": old["metadata"]["uid"]},
            },
        }
    )
    old = sim.get("persistentvolumeclaims", "default", name)
    assert old is not None
    new = {
        **old,
        "spec": {**old["spec"], "volumeName": volume},
        "status": {**old.get("status", {}), "phase": "Bound"},
    }
    sim.write("persistentvolumeclaims", new, old)


def test_wait_for_first_consumer_claim_gets_a_node_then_the_pod_is_bound() -> None:
    sim = Simulation(nodes=3)
    sim.apply(claim("data"))  # the default class "standard" waits for the first consumer
    sim.apply(with_claim("db", "data"))
    pvc = sim.get("persistentvolumeclaims", "default", "data")
    assert pvc is not None
    if (pvc.get("status") or {}).get("phase") != "Bound":
        selected = pvc["metadata"]["annotations"]["volume.kubernetes.io/selected-node"]
        assert selected in {"node-1", "node-2", "node-3"}
        assert node_of(sim, "db") is None
        bind_claim_by_hand(sim, "data")
    else:  # the persistentvolume-controller has landed and provisioned already
        selected = pvc["metadata"]["annotations"]["volume.kubernetes.io/selected-node"]
    assert node_of(sim, "db") == selected


def test_a_missing_claim_makes_the_pod_unschedulable_until_it_exists() -> None:
    sim = Simulation(nodes=2)
    sim.apply(with_claim("db", "nope"))
    assert unschedulable_message(sim, "db") == (
        '0/2 nodes are available: persistentvolumeclaim "nope" not found. '
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )
    sim.apply(claim("nope"))
    pvc = sim.get("persistentvolumeclaims", "default", "nope")
    assert pvc is not None
    assert "volume.kubernetes.io/selected-node" in pvc["metadata"].get("annotations", {})


def test_an_unbound_immediate_claim_blocks_scheduling() -> None:
    sim = Simulation(nodes=1)
    sim.apply(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "now"},
            "provisioner": "example.com/none",
            "volumeBindingMode": "Immediate",
        }
    )
    sim.apply(claim("data", storage_class="now"))
    sim.apply(with_claim("db", "data"))
    pvc = sim.get("persistentvolumeclaims", "default", "data")
    assert pvc is not None
    if (pvc.get("status") or {}).get("phase") != "Bound":
        assert unschedulable_message(sim, "db").startswith(
            "0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. "
        )
        bind_claim_by_hand(sim, "data")
    assert node_of(sim, "db") == "node-1"


def test_a_generic_ephemeral_volume_waits_for_its_claim() -> None:
    sim = Simulation(nodes=1)
    scratch = pod("scratch")
    template = {
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    }
    scratch["spec"]["volumes"] = [{"name": "tmp", "ephemeral": {"volumeClaimTemplate": template}}]
    sim.apply(scratch)
    if sim.get("persistentvolumeclaims", "default", "scratch-tmp") is None:
        assert unschedulable_message(sim, "scratch").startswith(
            "0/1 nodes are available: waiting for ephemeral volume controller to create the "
            'persistentvolumeclaim "scratch-tmp". '
        )
        sim.apply({**claim("scratch-tmp"), "metadata": {"name": "scratch-tmp"}})
    pvc = sim.get("persistentvolumeclaims", "default", "scratch-tmp")
    assert pvc is not None
    assert pvc["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == "node-1"
