"""ReplicaSet controller: pods from the template up to `spec.replicas`, extras deleted least
useful first, status counted from the pods. The test plays the kubelet: pods ask for a scheduler
that does not exist (so no real scheduler or kubelet touches them) and the test writes their
Ready condition itself."""

from __future__ import annotations

from typing import Any

from sandbox.errors import Forbidden
from sandbox.objects import Objects
from sandbox.registry import ResourceType
from sandbox.store import Obj
from tests.support.playing import set_ready
from tests.support.simulation import Simulation, condition


def replicaset(name: str = "web", replicas: int = 3, **spec: Any) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name, "tier": "front"}},
                "spec": {
                    "schedulerName": "test-scheduler",
                    "containers": [{"name": "web", "image": "nginx:1.27"}],
                },
            },
            **spec,
        },
    }


def owned_pods(sim: Simulation, rs: Obj) -> list[Obj]:
    uid = rs["metadata"]["uid"]
    return [
        p
        for p in sim.list("pods", rs["metadata"]["namespace"])
        if any(r["uid"] == uid for r in p["metadata"].get("ownerReferences", []))
    ]


def current(sim: Simulation, name: str = "web") -> Obj:
    found = sim.get("replicasets", "default", name)
    assert found is not None
    return found


def test_creates_pods_from_the_template_with_a_controller_reference() -> None:
    sim = Simulation()
    (rs,) = sim.apply(replicaset(replicas=3))

    pods = owned_pods(sim, rs)

    assert len(pods) == 3
    for pod in pods:
        meta = pod["metadata"]
        assert meta["name"].startswith("web-")
        assert meta["generateName"] == "web-"
        assert meta["labels"] == {"app": "web", "tier": "front"}
        (ref,) = meta["ownerReferences"]
        assert ref["kind"] == "ReplicaSet"
        assert ref["name"] == "web"
        assert ref["controller"] is True
        assert ref["blockOwnerDeletion"] is True
        assert pod["spec"]["containers"][0]["image"] == "nginx:1.27"
    created = sim.events_for(rs, reason="SuccessfulCreate")
    assert sorted(e["message"] for e in created) == sorted(
        f"Created pod: {p['metadata']['name']}" for p in pods
    )
    assert all(e["source"]["component"] == "replicaset-controller" for e in created)


def test_status_counts_replicas_ready_and_available() -> None:
    sim = Simulation()
    sim.apply(replicaset(replicas=3))
    status = current(sim)["status"]
    assert status["replicas"] == 3
    assert status["fullyLabeledReplicas"] == 3
    assert "readyReplicas" not in status
    assert status["observedGeneration"] == 1

    pods = sim.list("pods")
    set_ready(sim, pods[:2])

    status = current(sim)["status"]
    assert status["readyReplicas"] == 2
    assert status["availableReplicas"] == 2


def test_available_waits_for_min_ready_seconds() -> None:
    sim = Simulation()
    sim.apply(replicaset(replicas=2, minReadySeconds=10))
    set_ready(sim)
    status = current(sim)["status"]
    assert status["readyReplicas"] == 2
    assert "availableReplicas" not in status

    sim.run_for(11)

    assert current(sim)["status"]["availableReplicas"] == 2


def test_scale_down_deletes_not_ready_pods_before_ready_ones() -> None:
    sim = Simulation()
    (rs,) = sim.apply(replicaset(replicas=4))
    pods = sim.list("pods")
    set_ready(sim, pods[:2])
    ready_names = {p["metadata"]["name"] for p in pods[:2]}

    sim.patch("replicasets", "default", "web", {"spec": {"replicas": 2}})

    left = owned_pods(sim, rs)
    assert {p["metadata"]["name"] for p in left} == ready_names
    deleted = sim.events_for(rs, reason="SuccessfulDelete")
    assert len(deleted) == 2
    assert all(e["message"].startswith("Deleted pod: web-") for e in deleted)
    status = current(sim)["status"]
    assert status["replicas"] == 2
    assert status["observedGeneration"] == 2


def test_scale_down_prefers_newer_pods_among_equals() -> None:
    sim = Simulation()
    (rs,) = sim.apply(replicaset(replicas=1))
    (first,) = owned_pods(sim, rs)
    sim.run_for(5)
    sim.patch("replicasets", "default", "web", {"spec": {"replicas": 3}})
    set_ready(sim)

    sim.patch("replicasets", "default", "web", {"spec": {"replicas": 1}})

    assert [p["metadata"]["name"] for p in owned_pods(sim, rs)] == [first["metadata"]["name"]]


def test_replaces_a_deleted_pod() -> None:
    sim = Simulation()
    (rs,) = sim.apply(replicaset(replicas=2))
    victim = owned_pods(sim, rs)[0]["metadata"]["name"]

    sim.delete("pods", "default", victim)

    names = {p["metadata"]["name"] for p in owned_pods(sim, rs)}
    assert len(names) == 2
    assert victim not in names


def test_terminating_pods_do_not_count() -> None:
    sim = Simulation()
    (rs,) = sim.apply(replicaset(replicas=2))
    pod = owned_pods(sim, rs)[0]
    # a finalizer keeps the pod visible with a deletionTimestamp, as a slow shutdown would
    sim.patch(
        "pods", "default", pod["metadata"]["name"], {"metadata": {"finalizers": ["test/hold"]}}
    )

    sim.delete("pods", "default", pod["metadata"]["name"])

    active = [p for p in owned_pods(sim, rs) if not p["metadata"].get("deletionTimestamp")]
    assert len(active) == 2
    status = current(sim)["status"]
    assert status["replicas"] == 2
    assert status["terminatingReplicas"] == 1


def quota(sim: Simulation, *, pods: int) -> None:
    """Play a ResourceQuota: pod creations beyond `pods` in total are refused."""
    created: list[str] = []

    def admit(objects: Objects, rt: ResourceType, obj: Obj, old: Obj | None) -> Obj:
        if rt.kind != "Pod" or old is not None:
            return obj
        if len(created) >= pods:
            raise Forbidden(
                f'pods "{obj["metadata"]["name"]}" is forbidden: exceeded quota: pods-quota, '
                f"requested: pods=1, used: pods={pods}, limited: pods={pods}"
            )
        created.append(obj["metadata"]["name"])
        return obj

    sim.objects.admit.append(admit)


def test_failed_create_sets_replica_failure_and_a_warning() -> None:
    sim = Simulation()
    quota(sim, pods=2)

    (rs,) = sim.apply(replicaset(replicas=3))

    status = current(sim)["status"]
    assert status["replicas"] == 2
    failure = condition(current(sim), "ReplicaFailure")
    assert failure is not None
    assert failure["status"] == "True"
    assert failure["reason"] == "FailedCreate"
    assert "exceeded quota: pods-quota" in failure["message"]
    (warning,) = sim.events_for(rs, reason="FailedCreate")
    assert warning["type"] == "Warning"
    assert warning["message"].startswith('Error creating: pods "web-')


def test_slow_start_stops_creating_at_the_first_failure() -> None:
    sim = Simulation()
    quota(sim, pods=0)

    (rs,) = sim.apply(replicaset(replicas=20))

    assert owned_pods(sim, rs) == []
    # one attempt per pass, not twenty: the first batch has one pod and it failed
    (warning,) = sim.events_for(rs, reason="FailedCreate")
    assert warning["count"] == 1
