"""StatefulSet controller: ordered pods with stable names, claims from templates, ordered scale
down and rolling updates. The test plays the scheduler and kubelet (binds pods, makes them Ready,
finishes their deletion) so it depends only on the StatefulSet controller."""

from __future__ import annotations

from typing import Any

import pytest

from sandbox.store import Obj
from tests.support.playing import play_kubelet
from tests.support.simulation import Simulation

NEW_IMAGE = {
    "spec": {"template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:1.28"}]}}}
}


def statefulset(name: str = "web", replicas: int = 3, **spec: Any) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]},
            },
            **spec,
        },
    }


@pytest.fixture
def sim() -> Simulation:
    return Simulation(nodes=3, only=("statefulset-controller",))


def names(sim: Simulation, app: str = "web") -> list[str]:
    return sorted(p["metadata"]["name"] for p in sim.pods(app=app))


def sts_status(sim: Simulation, name: str = "web") -> dict[str, Any]:
    sts = sim.get("statefulsets", "default", name)
    assert sts is not None
    return dict(sts.get("status") or {})


def test_ordered_ready_creates_one_pod_at_a_time_with_stable_names(sim: Simulation) -> None:
    sim.apply(statefulset())
    assert names(sim) == ["web-0"]  # web-1 waits for web-0 to be Running and Ready
    play_kubelet(sim)
    assert names(sim) == ["web-0", "web-1"]
    play_kubelet(sim)
    play_kubelet(sim)
    assert names(sim) == ["web-0", "web-1", "web-2"]
    pod = sim.get("pods", "default", "web-1")
    assert pod is not None
    labels = pod["metadata"]["labels"]
    assert labels["statefulset.kubernetes.io/pod-name"] == "web-1"
    assert labels["apps.kubernetes.io/pod-index"] == "1"
    assert labels["controller-revision-hash"].startswith("web-")
    assert pod["spec"]["hostname"] == "web-1"
    assert pod["spec"]["subdomain"] == "web"
    owner = pod["metadata"]["ownerReferences"][0]
    assert owner["kind"] == "StatefulSet" and owner["controller"] and owner["blockOwnerDeletion"]
    status = sts_status(sim)
    assert status["replicas"] == 3 and status["readyReplicas"] == 3
    assert status["availableReplicas"] == 3 and status["updatedReplicas"] == 3
    assert (
        status["currentRevision"] == status["updateRevision"] == labels["controller-revision-hash"]
    )
    sts = sim.get("statefulsets", "default", "web")
    assert sts is not None
    messages = [e["message"] for e in sim.events_for(sts, reason="SuccessfulCreate")]
    assert "create Pod web-0 in StatefulSet web successful" in messages


def test_a_pod_that_never_becomes_ready_holds_the_next_ordinal(sim: Simulation) -> None:
    sim.apply(statefulset())
    play_kubelet(sim, ready=False)
    sim.run_for(30)
    assert names(sim) == ["web-0"]


def test_parallel_policy_creates_every_pod_at_once(sim: Simulation) -> None:
    sim.apply(statefulset(podManagementPolicy="Parallel"))
    assert names(sim) == ["web-0", "web-1", "web-2"]


def test_volume_claim_templates_become_claims_before_pods(sim: Simulation) -> None:
    template = {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    sim.apply(statefulset(replicas=2, volumeClaimTemplates=[template]))
    play_kubelet(sim)
    claim = sim.get("persistentvolumeclaims", "default", "data-web-0")
    assert claim is not None and claim["metadata"]["labels"] == {"app": "web"}
    assert sim.get("persistentvolumeclaims", "default", "data-web-1") is not None
    pod = sim.get("pods", "default", "web-1")
    assert pod is not None
    assert {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-1"}} in pod["spec"][
        "volumes"
    ]
    sts = sim.get("statefulsets", "default", "web")
    assert sts is not None
    messages = [e["message"] for e in sim.events_for(sts, reason="SuccessfulCreate")]
    assert "create Claim data-web-0 Pod web-0 in StatefulSet web success" in messages
    # scale down keeps the claims (default retention policy Retain)
    sim.patch("statefulsets", "default", "web", {"spec": {"replicas": 1}})
    play_kubelet(sim)
    assert names(sim) == ["web-0"]
    assert sim.get("persistentvolumeclaims", "default", "data-web-1") is not None


def test_scale_down_removes_the_highest_ordinal_first_one_at_a_time(sim: Simulation) -> None:
    sim.apply(statefulset(replicas=4))
    for _ in range(4):
        play_kubelet(sim)
    assert names(sim) == ["web-0", "web-1", "web-2", "web-3"]
    sim.patch("statefulsets", "default", "web", {"spec": {"replicas": 1}})
    terminating = [
        p["metadata"]["name"] for p in sim.pods(app="web") if p["metadata"].get("deletionTimestamp")
    ]
    assert terminating == ["web-3"]
    play_kubelet(sim)
    assert names(sim) == ["web-0", "web-1", "web-2"]
    play_kubelet(sim)
    play_kubelet(sim)
    assert names(sim) == ["web-0"]
    assert sts_status(sim)["replicas"] == 1


def test_rolling_update_replaces_pods_from_the_highest_ordinal_down(sim: Simulation) -> None:
    sim.apply(statefulset())
    for _ in range(3):
        play_kubelet(sim)
    old = sts_status(sim)["updateRevision"]
    sim.patch("statefulsets", "default", "web", NEW_IMAGE)
    new = sts_status(sim)["updateRevision"]
    assert new != old and sts_status(sim)["currentRevision"] == old
    order = []
    for _ in range(10):
        for pod in sim.pods(app="web"):
            if pod["metadata"].get("deletionTimestamp"):
                order.append(pod["metadata"]["name"])
        play_kubelet(sim)
    assert order == ["web-2", "web-1", "web-0"]
    revisions = {p["metadata"]["labels"]["controller-revision-hash"] for p in sim.pods(app="web")}
    assert revisions == {new}
    status = sts_status(sim)
    assert status["currentRevision"] == new and status["updatedReplicas"] == 3
    history = sim.cluster.store.list(("apps", "controllerrevisions"), "default")
    assert sorted(r["revision"] for r in history) == [1, 2]


def test_partition_keeps_lower_ordinals_on_the_old_revision(sim: Simulation) -> None:
    sim.apply(
        statefulset(updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 2}})
    )
    for _ in range(3):
        play_kubelet(sim)
    old = sts_status(sim)["updateRevision"]
    sim.patch("statefulsets", "default", "web", NEW_IMAGE)
    for _ in range(5):
        play_kubelet(sim)
    by_name = {
        p["metadata"]["name"]: p["metadata"]["labels"]["controller-revision-hash"]
        for p in sim.pods(app="web")
    }
    new = sts_status(sim)["updateRevision"]
    assert by_name == {"web-0": old, "web-1": old, "web-2": new}
    assert sts_status(sim)["currentRevision"] == old


def test_on_delete_waits_for_pods_to_be_deleted_by_hand(sim: Simulation) -> None:
    sim.apply(statefulset(replicas=2, updateStrategy={"type": "OnDelete"}))
    play_kubelet(sim)
    play_kubelet(sim)
    sim.patch("statefulsets", "default", "web", NEW_IMAGE)
    play_kubelet(sim)
    assert "updatedReplicas" not in sts_status(sim)
    assert not any(p["metadata"].get("deletionTimestamp") for p in sim.pods(app="web"))
    sim.delete("pods", "default", "web-0", grace_period=0)
    play_kubelet(sim)
    new = sts_status(sim)["updateRevision"]
    pod = sim.get("pods", "default", "web-0")
    assert pod is not None and pod["metadata"]["labels"]["controller-revision-hash"] == new
