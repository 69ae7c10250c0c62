"""Deployment controller: ReplicaSets per template hash, rolling update within maxSurge and
maxUnavailable, Recreate, revisions and undo, pause, progress deadline, history limit, scaling.

The test plays the kubelet (`playing.set_ready`): pods ask for a scheduler that does
not exist, so only the Deployment and ReplicaSet controllers act on them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from sandbox.control.rollout import HASH_LABEL, template_hash, without_hash
from sandbox.objects import WriteOptions
from sandbox.store import Change, Obj
from tests.support.playing import set_ready
from tests.support.simulation import Simulation, condition

REVISION = "deployment.kubernetes.io/revision"


def deployment(name: str = "web", replicas: int = 4, **spec: Any) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "schedulerName": "test-scheduler",
                    "containers": [{"name": "web", "image": "nginx:1.26"}],
                },
            },
            **spec,
        },
    }


def image(tag: str) -> Obj:
    return {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": tag}]}}}}


def rolling(surge: int | str, unavailable: int | str) -> Obj:
    return {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable},
    }


def get(sim: Simulation, name: str = "web") -> Obj:
    found = sim.get("deployments", "default", name)
    assert found is not None
    return found


def sets(sim: Simulation) -> list[Obj]:
    """The ReplicaSets, oldest revision first."""
    return sorted(
        sim.list("replicasets", "default"),
        key=lambda rs: int(rs["metadata"]["annotations"][REVISION]),
    )


def images(sim: Simulation) -> list[str]:
    live = [p for p in sim.list("pods", "default") if not p["metadata"].get("deletionTimestamp")]
    return sorted(p["spec"]["containers"][0]["image"] for p in live)


def rolled_out(sim: Simulation, name: str = "web") -> bool:
    d = get(sim, name)
    status = d.get("status", {})
    desired = d["spec"]["replicas"]
    return (
        status.get("observedGeneration") == d["metadata"]["generation"]
        and status.get("updatedReplicas", 0) == desired
        and status.get("replicas", 0) == desired
        and status.get("availableReplicas", 0) == desired
    )


@contextmanager
def invariant(sim: Simulation, *, most: int, least: int) -> Iterator[list[tuple[int, int]]]:
    """Check after every stored change that live pods stay <= `most` and ready ones >= `least`."""
    seen: list[tuple[int, int]] = []

    def check(change: Change) -> None:
        if change.key != ("", "pods"):
            return
        live = [
            p for p in sim.list("pods", "default") if not p["metadata"].get("deletionTimestamp")
        ]
        ready = [p for p in live if (condition(p, "Ready") or {}).get("status") == "True"]
        seen.append((len(live), len(ready)))
        assert len(live) <= most, f"{len(live)} pods exceed replicas + maxSurge ({most})"
        assert len(ready) >= least, f"{len(ready)} ready pods, below {least}"

    sim.cluster.store.observe(check)
    yield seen


# -- creation ------------------------------------------------------------------------------------


def test_creates_a_replicaset_named_by_template_hash_with_revision_1() -> None:
    sim = Simulation()
    (d,) = sim.apply(deployment(replicas=3))

    (rs,) = sim.list("replicasets", "default")

    pod_hash = template_hash(d["spec"]["template"])
    assert rs["metadata"]["name"] == f"web-{pod_hash}"
    assert pod_hash.isalnum() and pod_hash == pod_hash.lower()
    assert rs["metadata"]["labels"] == {"app": "web", HASH_LABEL: pod_hash}
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "web", HASH_LABEL: pod_hash}
    assert rs["spec"]["template"]["metadata"]["labels"][HASH_LABEL] == pod_hash
    assert without_hash(rs["spec"]["template"]) == d["spec"]["template"]
    annotations = rs["metadata"]["annotations"]
    assert annotations[REVISION] == "1"
    assert annotations["deployment.kubernetes.io/desired-replicas"] == "3"
    assert annotations["deployment.kubernetes.io/max-replicas"] == "4"
    (ref,) = rs["metadata"]["ownerReferences"]
    assert (ref["kind"], ref["name"], ref["controller"]) == ("Deployment", "web", True)
    assert get(sim)["metadata"]["annotations"][REVISION] == "1"
    assert len(sim.pods(app="web")) == 3
    (scaled,) = sim.events_for(d, reason="ScalingReplicaSet")
    assert scaled["message"] == f"Scaled up replica set web-{pod_hash} from 0 to 3"


def test_status_and_conditions_follow_pod_readiness() -> None:
    sim = Simulation()
    sim.apply(deployment(replicas=2))
    rs_name = sim.list("replicasets", "default")[0]["metadata"]["name"]

    status = get(sim)["status"]
    assert status["observedGeneration"] == 1
    assert status["replicas"] == 2
    assert status["updatedReplicas"] == 2
    assert status["unavailableReplicas"] == 2
    available = condition(get(sim), "Available")
    assert available is not None
    assert (available["status"], available["reason"]) == ("False", "MinimumReplicasUnavailable")
    assert available["message"] == "Deployment does not have minimum availability."
    progressing = condition(get(sim), "Progressing")
    assert progressing is not None
    assert progressing["status"] == "True"
    assert progressing["reason"] in ("NewReplicaSetCreated", "ReplicaSetUpdated")

    set_ready(sim)

    status = get(sim)["status"]
    assert status["readyReplicas"] == 2
    assert status["availableReplicas"] == 2
    assert "unavailableReplicas" not in status
    available = condition(get(sim), "Available")
    assert available is not None
    assert (available["status"], available["reason"]) == ("True", "MinimumReplicasAvailable")
    assert available["message"] == "Deployment has minimum availability."
    progressing = condition(get(sim), "Progressing")
    assert progressing is not None
    assert (progressing["status"], progressing["reason"]) == ("True", "NewReplicaSetAvailable")
    assert progressing["message"] == f'ReplicaSet "{rs_name}" has successfully progressed.'


def test_created_condition_names_the_new_replicaset() -> None:
    sim = Simulation()
    sim.apply(deployment(replicas=1))
    set_ready(sim)

    sim.patch("deployments", "default", "web", image("nginx:1.27"))

    new = sets(sim)[-1]["metadata"]["name"]
    progressing = condition(get(sim), "Progressing")
    assert progressing is not None
    assert progressing["status"] == "True"
    assert progressing["message"] in (
        f'Created new replica set "{new}"',
        f'ReplicaSet "{new}" is progressing.',
    )


# -- rolling update ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("replicas", "surge", "unavailable", "most", "least"),
    [
        (4, 1, 1, 5, 3),
        (4, 0, 1, 4, 3),
        (4, 2, 0, 6, 4),
        (10, "25%", "25%", 13, 8),
        (3, 0, "10%", 3, 2),  # unavailable rounds down to 0 with no surge: it becomes 1
    ],
    ids=["surge1-unavail1", "no-surge", "no-unavailable", "percent", "both-zero"],
)
def test_rolling_update_honours_surge_and_unavailable_at_every_step(
    replicas: int, surge: int | str, unavailable: int | str, most: int, least: int
) -> None:
    sim = Simulation()
    sim.apply(deployment(replicas=replicas, strategy=rolling(surge, unavailable)))
    set_ready(sim)

    with invariant(sim, most=most, least=least) as seen:
        sim.patch("deployments", "default", "web", image("nginx:1.27"))
        for _ in range(4 * replicas):
            if rolled_out(sim):
                break
            set_ready(sim)

    assert rolled_out(sim)
    assert images(sim) == ["nginx:1.27"] * replicas
    old, new = sets(sim)
    assert old["spec"]["replicas"] == 0
    assert new["metadata"]["annotations"][REVISION] == "2"
    assert get(sim)["metadata"]["annotations"][REVISION] == "2"
    assert max(live for live, _ in seen) == most  # the surge was used, not just respected
    d = get(sim)
    messages = [e["message"] for e in sim.events_for(d, reason="ScalingReplicaSet")]
    assert any(
        m.startswith(f"Scaled down replica set {old['metadata']['name']} from ") for m in messages
    )
    progressing = condition(d, "Progressing")
    assert progressing is not None
    assert progressing["reason"] == "NewReplicaSetAvailable"


def test_rollout_waits_for_new_pods_to_be_ready() -> None:
    sim = Simulation()
    sim.apply(deployment(replicas=4, strategy=rolling(1, 1)))
    set_ready(sim)

    sim.patch("deployments", "default", "web", image("nginx:1.27"))
    sim.run_for(30)

    old, new = sets(sim)
    # one surged pod plus one replacing an unavailable old pod, and no further without readiness
    assert new["spec"]["replicas"] == 2
    assert old["spec"]["replicas"] == 3
    status = get(sim)["status"]
    assert status["updatedReplicas"] == 2
    assert status["availableReplicas"] == 3


def test_restart_annotation_rolls_out_a_new_replicaset() -> None:
    sim = Simulation()
    sim.apply(deployment(replicas=2))
    set_ready(sim)
    first = sets(sim)[0]["metadata"]["name"]

    stamp = {"kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z"}
    sim.patch(
        "deployments",
        "default",
        "web",
        {"spec": {"template": {"metadata": {"annotations": stamp}}}},
    )
    sim.run_until(lambda: rolled_out(sim) or set_ready(sim), timeout=60)

    names = [rs["metadata"]["name"] for rs in sets(sim)]
    assert len(names) == 2
    assert names[0] == first
    assert get(sim)["metadata"]["annotations"][REVISION] == "2"


def test_change_cause_is_copied_to_the_new_replicaset() -> None:
    sim = Simulation()
    d = deployment(replicas=1)
    d["metadata"]["annotations"] = {"kubernetes.io/change-cause": "first deploy"}
    sim.apply(d)

    (rs,) = sets(sim)

    assert rs["metadata"]["annotations"]["kubernetes.io/change-cause"] == "first deploy"


# -- recreate ------------------------------------------------------------------------------------


def test_recreate_scales_old_to_zero_and_waits_for_its_pods_before_scaling_up() -> None:
    sim = Simulation()
    sim.apply(deployment(replicas=3, strategy={"type": "Recreate"}))
    set_ready(sim)
    held = hold_pods(sim)

    sim.patch("deployments", "default", "web", image("nginx:1.27"))

    # old pods are terminating but still there: no new ReplicaSet yet
    (old,) = sets(sim)
    assert old["spec"]["replicas"] == 0
    assert len(sim.list("pods", "default")) == 3
    assert images(sim) == []

    release(sim, held)

    old, new = sets(sim)
    assert new["spec"]["replicas"] == 3
    assert images(sim) == ["nginx:1.27"] * 3


def hold_pods(sim: Simulation) -> list[Obj]:
    """Give every pod a finalizer, so its deletion waits (like a slow graceful shutdown)."""
    hold = {"metadata": {"finalizers": ["test/hold"]}}
    return [
        sim.patch("pods", "default", pod["metadata"]["name"], hold)
        for pod in sim.list("pods", "default")
    ]


def release(sim: Simulation, pods: list[Obj]) -> None:
    for pod in pods:
        if sim.get("pods", "default", pod["metadata"]["name"]) is not None:
            sim.patch(
                "pods", "default", pod["metadata"]["name"], {"metadata": {"finalizers": None}}
            )
    sim.run_for(1)


# -- revisions -----------------------------------------------------------------------------------


def undo_to(sim: Simulation, revision: int) -> None:
    """What `kubectl rollout undo --to-revision` does: put that ReplicaSet's template (without
    its pod-template-hash) back into the Deployment."""
    (target,) = [
        rs
        for rs in sim.list("replicasets", "default")
        if rs["metadata"]["annotations"][REVISION] == str(revision)
    ]
    d = get(sim)
    body = {**d, "spec": {**d["spec"], "template": without_hash(target["spec"]["template"])}}
    sim.objects.update(
        sim.rt("deployments"),
        body,
        namespace="default",
        name="web",
        opts=WriteOptions(field_manager="kubectl"),
    )
    sim.cluster.store.commit()
    sim.settle()


def roll(sim: Simulation) -> None:
    sim.run_until(lambda: rolled_out(sim) or set_ready(sim), timeout=120, what="rollout")


def test_undo_reuses_the_old_replicaset_as_revision_3_with_history() -> None:
    sim = Simulation()
    sim.apply(deployment(replicas=2))
    roll(sim)
    first = sets(sim)[0]
    sim.patch("deployments", "default", "web", image("nginx:1.27"))
    roll(sim)

    undo_to(sim, 1)
    roll(sim)

    assert len(sim.list("replicasets", "default")) == 2
    again = sim.get("replicasets", "default", first["metadata"]["name"])
    assert again is not None
    assert again["metadata"]["uid"] == first["metadata"]["uid"]
    assert again["metadata"]["annotations"][REVISION] == "3"
    assert again["metadata"]["annotations"]["deployment.kubernetes.io/revision-history"] == "1"
    assert again["spec"]["replicas"] == 2
    assert get(sim)["metadata"]["annotations"][REVISION] == "3"
    assert images(sim) == ["nginx:1.26"] * 2


def test_history_limit_deletes_the_oldest_empty_replicasets() -> None:
    sim = Simulation()
    sim.apply(deployment(replicas=1, revisionHistoryLimit=2))
    roll(sim)
    for tag in ("1.27", "1.28", "1.29", "1.30"):
        sim.patch("deployments", "default", "web", image(f"nginx:{tag}"))
        roll(sim)
    sim.run_for(2)

    revisions = [rs["metadata"]["annotations"][REVISION] for rs in sets(sim)]
    assert revisions == ["3", "4", "5"]
    assert images(sim) == ["nginx:1.30"]


# -- pause, deadline, scaling --------------------------------------------------------------------


def test_pause_holds_a_template_change_and_resume_rolls_it_out() -> None:
    sim = Simulation()
    sim.apply(deployment(replicas=2))
    roll(sim)

    sim.patch("deployments", "default", "web", {"spec": {"paused": True}})
    sim.patch("deployments", "default", "web", image("nginx:1.27"))
    sim.run_for(30)

    assert len(sim.list("replicasets", "default")) == 1
    assert images(sim) == ["nginx:1.26"] * 2
    paused = condition(get(sim), "Progressing")
    assert paused is not None
    assert (paused["status"], paused["reason"]) == ("Unknown", "DeploymentPaused")
    assert paused["message"] == "Deployment is paused"
    assert get(sim)["status"]["observedGeneration"] == get(sim)["metadata"]["generation"]

    reasons = progressing_reasons(sim)
    sim.patch("deployments", "default", "web", {"spec": {"paused": False}})
    roll(sim)

    assert reasons[:4] == [
        "DeploymentPaused",
        "DeploymentResumed",
        "NewReplicaSetCreated",
        "ReplicaSetUpdated",
    ]

    assert images(sim) == ["nginx:1.27"] * 2
    done = condition(get(sim), "Progressing")
    assert done is not None
    assert done["reason"] == "NewReplicaSetAvailable"


def progressing_reasons(sim: Simulation) -> list[str]:
    """Every reason the Deployment's Progressing condition takes from now on, in order."""
    seen: list[str] = []

    def record(change: Change) -> None:
        if change.key == ("apps", "deployments") and change.type != "DELETED":
            found = condition(change.object, "Progressing")
            if found is not None and (not seen or seen[-1] != found["reason"]):
                seen.append(found["reason"])

    sim.cluster.store.observe(record)
    return seen


def test_scaling_applies_while_paused() -> None:
    sim = Simulation()
    sim.apply(deployment(replicas=2))
    roll(sim)
    sim.patch("deployments", "default", "web", {"spec": {"paused": True}})

    sim.patch("deployments", "default", "web", {"spec": {"replicas": 5}})

    (rs,) = sets(sim)
    assert rs["spec"]["replicas"] == 5
    assert rs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] == "5"
    assert len(images(sim)) == 5


def test_progress_deadline_exceeded_when_new_pods_never_become_ready() -> None:
    sim = Simulation()
    sim.apply(deployment(replicas=2, progressDeadlineSeconds=60))
    roll(sim)
    sim.patch("deployments", "default", "web", image("nginx:broken"))
    new = sets(sim)[-1]["metadata"]["name"]

    sim.run_for(50)
    progressing = condition(get(sim), "Progressing")
    assert progressing is not None
    assert progressing["status"] == "True"

    sim.run_for(20)

    progressing = condition(get(sim), "Progressing")
    assert progressing is not None
    assert (progressing["status"], progressing["reason"]) == ("False", "ProgressDeadlineExceeded")
    assert progressing["message"] == f'ReplicaSet "{new}" has timed out progressing.'
    available = condition(get(sim), "Available")
    assert available is not None
    assert available["status"] == "True"  # the old pods still serve


def test_scale_while_rolling_spreads_the_change_over_both_replicasets() -> None:
    sim = Simulation()
    sim.apply(deployment(replicas=10, strategy=rolling(3, 2)))
    roll(sim)
    sim.patch("deployments", "default", "web", image("nginx:1.27"))
    old, new = sets(sim)
    assert (old["spec"]["replicas"], new["spec"]["replicas"]) == (8, 5)

    sim.patch("deployments", "default", "web", {"spec": {"replicas": 20}})

    old, new = sets(sim)
    # 23 allowed (20 + surge 3) split by size against max-replicas 13: 8 -> 14, 5 -> 9
    assert old["spec"]["replicas"] + new["spec"]["replicas"] == 23
    assert old["spec"]["replicas"] > 8 and new["spec"]["replicas"] > 5
    assert old["spec"]["replicas"] > new["spec"]["replicas"]
    roll(sim)
    assert images(sim) == ["nginx:1.27"] * 20


def test_scale_down_of_a_settled_deployment_scales_its_replicaset() -> None:
    sim = Simulation()
    (d,) = sim.apply(deployment(replicas=4))
    roll(sim)

    sim.patch("deployments", "default", "web", {"spec": {"replicas": 1}})

    (rs,) = sets(sim)
    assert rs["spec"]["replicas"] == 1
    assert len(images(sim)) == 1
    messages = [e["message"] for e in sim.events_for(d, reason="ScalingReplicaSet")]
    assert f"Scaled down replica set {rs['metadata']['name']} from 4 to 1" in messages
    assert rolled_out(sim)
