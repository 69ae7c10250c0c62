"""The sandbox's control plane as a Cluster API KubeadmControlPlane, on a stopped clock: a newer
`spec.version` rolls it and, `upgradeSeconds` later, moves the version `/version` reports;
Cluster API's webhook refuses a skipped minor, a downgrade and a version that is no release."""

from __future__ import annotations

import re
from typing import Any

import pytest

from sandbox.errors import Invalid
from sandbox.objects import WriteOptions
from sandbox.store import Obj
from sandbox.version import version_info
from sandbox.world import World
from tests.support.machine_pools import (
    CONTROL_PLANE,
    cluster,
    control_plane,
    control_plane_of,
    merge_patch,
    resource,
)
from tests.support.simulation import Simulation, condition


def simulation(*, running: str = "v1.37.0") -> Simulation:
    world = World()
    world.control_plane_version = running
    return Simulation(nodes=0, world=world)


def upgrade(sim: Simulation, version: str) -> Obj:
    return merge_patch(sim, "kubeadmcontrolplanes", CONTROL_PLANE, {"spec": {"version": version}})


def reported(sim: Simulation) -> str:
    """The gitVersion `/version` (and so `kubectl version`) answers with."""
    return str(version_info(sim.world.control_plane_version)["gitVersion"])


def reasons(kcp: Obj) -> dict[str, Any]:
    return {c["type"]: (c["status"], c.get("reason")) for c in kcp["status"]["conditions"]}


def test_an_upgrade_moves_the_version_after_upgrade_seconds_and_not_before() -> None:
    sim = simulation()
    sim.apply(control_plane("v1.37.0", replicas=3))
    upgrade(sim, "v1.38.1")
    kcp = control_plane_of(sim)
    moving = condition(kcp, "MachinesSpecUpToDate")
    assert moving is not None and moving["reason"] == "RollingUpdateInProgress"
    assert moving["message"] == "Rolling 3 replicas with outdated spec (0 replicas up to date)"
    assert reasons(kcp)["Ready"] == ("False", "RollingUpdateInProgress")
    assert reasons(kcp)["Available"] == ("True", None)
    sim.run_for(40)
    assert control_plane_of(sim)["status"]["updatedReplicas"] == 1
    sim.run_for(79)
    kcp = control_plane_of(sim)
    assert (kcp["status"]["version"], kcp["status"]["updatedReplicas"]) == ("v1.37.0", 2)
    assert reported(sim) == "v1.37.0"
    sim.run_for(1)
    kcp = control_plane_of(sim)
    assert reported(sim) == "v1.38.1"
    assert version_info(sim.world.control_plane_version)["minor"] == "38"
    status = kcp["status"]
    assert (status["version"], status["replicas"], status["updatedReplicas"]) == ("v1.38.1", 3, 3)
    assert (status["readyReplicas"], status["unavailableReplicas"]) == (3, 0)
    assert status["ready"] is True and status["initialized"] is True
    assert reasons(kcp) == {
        "Available": ("True", None),
        "MachinesSpecUpToDate": ("True", None),
        "Ready": ("True", None),
    }


def test_the_upgrade_seconds_annotation_sets_how_long_a_roll_takes() -> None:
    sim = simulation()
    sim.apply(control_plane("v1.37.0", upgrade_seconds=30))
    upgrade(sim, "v1.37.2")  # a patch ahead rolls too
    sim.run_for(29)
    assert reported(sim) == "v1.37.0"
    sim.run_for(1)
    assert reported(sim) == "v1.37.2"
    assert control_plane_of(sim)["status"]["version"] == "v1.37.2"


@pytest.mark.parametrize(
    ("version", "words"),
    [
        pytest.param(
            "v1.39.0",
            "cannot update Kubernetes version from v1.37.0 to v1.39.0: upgrade one minor version"
            " at a time, to v1.38.x first",
            id="skips-a-minor",
        ),
        pytest.param(
            "v1.36.9",
            "cannot update Kubernetes version from v1.37.0 to v1.36.9: a control plane cannot "
            "be downgraded",
            id="downgrade",
        ),
        pytest.param("v1.38", "must be a Kubernetes version such as v1.37.2", id="no-patch"),
        pytest.param("latest", "must be a Kubernetes version such as v1.37.2", id="no-release"),
    ],
)
def test_a_version_kubeadm_cannot_reach_is_refused_and_nothing_changes(
    version: str, words: str
) -> None:
    sim = simulation()
    sim.apply(control_plane("v1.37.0"))
    before = control_plane_of(sim)
    with pytest.raises(Invalid) as refused:
        upgrade(sim, version)
    assert refused.value.code == 422
    [cause] = refused.value.causes
    assert cause.field == "spec.version" and words in cause.message, cause.message
    sim.run_for(300)
    assert control_plane_of(sim) == before
    assert reported(sim) == "v1.37.0"


def test_a_skip_is_judged_from_the_version_running_not_the_one_asked() -> None:
    sim = simulation()
    sim.apply(control_plane("v1.37.0"))
    upgrade(sim, "v1.38.0")
    with pytest.raises(Invalid, match=re.escape("from v1.37.0 to v1.39.0")):
        upgrade(sim, "v1.39.0")  # one minor past the spec, two past what runs
    sim.run_for(120)
    assert reported(sim) == "v1.38.0"
    upgrade(sim, "v1.39.0")
    sim.run_for(120)
    assert reported(sim) == "v1.39.0"


def test_a_new_control_plane_adopts_the_running_version_and_upgrades_only_up() -> None:
    sim = simulation(running="v1.37.2")
    sim.apply(control_plane("v1.37.0"))
    kcp = control_plane_of(sim)
    assert kcp["status"]["version"] == "v1.37.2"
    assert reasons(kcp)["MachinesSpecUpToDate"] == ("True", None)
    sim.run_for(300)
    assert reported(sim) == "v1.37.2"

    newer = simulation(running="v1.37.2")
    newer.apply(control_plane("v1.38.0"))
    assert control_plane_of(newer)["status"]["version"] == "v1.37.2"
    newer.run_for(120)
    assert reported(newer) == "v1.38.0"


def test_a_new_control_plane_two_minors_ahead_waits_saying_why() -> None:
    sim = simulation()
    sim.apply(control_plane("v1.39.0"))
    sim.run_for(300)
    kcp = control_plane_of(sim)
    assert reported(sim) == "v1.37.0" and kcp["status"]["version"] == "v1.37.0"
    blocked = condition(kcp, "MachinesSpecUpToDate")
    assert blocked is not None and blocked["reason"] == "UnsupportedVersionSkew"
    assert "set spec.version to a v1.38.x release first" in blocked["message"]
    upgrade(sim, "v1.38.0")  # from the running v1.37.0: allowed, and rolled in full
    sim.run_for(119)
    assert reported(sim) == "v1.37.0"
    sim.run_for(1)
    assert reported(sim) == "v1.38.0"


def test_the_cluster_naming_it_labels_and_owns_it() -> None:
    sim = simulation()
    sim.apply([cluster(control_plane=CONTROL_PLANE), control_plane()])
    kcp = control_plane_of(sim)
    assert kcp["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"] == "prod"
    [owner] = kcp["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("Cluster", "prod", True)


def test_a_control_plane_gets_cluster_api_defaults_and_keeps_its_kubeadm_config() -> None:
    sim = simulation()
    body = control_plane("1.37.0")
    del body["spec"]["replicas"]
    body["spec"]["kubeadmConfigSpec"]["files"] = [{"path": "/etc/x", "content": "y"}]
    body["spec"]["unknown"] = True
    rt = resource(sim, "kubeadmcontrolplanes")
    created = sim.objects.create(
        rt, body, namespace="default", opts=WriteOptions(field_manager="test")
    )
    spec = created["spec"]
    assert (spec["version"], spec["replicas"]) == ("v1.37.0", 1)
    assert spec["rolloutStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}
    assert spec["machineTemplate"]["infrastructureRef"]["namespace"] == "default"
    assert spec["kubeadmConfigSpec"] == body["spec"]["kubeadmConfigSpec"]
    assert "unknown" not in spec


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        pytest.param({"replicas": 2}, "spec.replicas", "cannot be an even number", id="even"),
        pytest.param({"replicas": 0}, "spec.replicas", "less than or equal to 0", id="zero"),
        pytest.param(
            {"rolloutStrategy": {"rollingUpdate": {"maxSurge": 2}}},
            "spec.rolloutStrategy.rollingUpdate.maxSurge",
            "value must be 1 or 0",
            id="surge",
        ),
    ],
)
def test_invalid_control_planes_are_refused_naming_the_field(
    changes: dict[str, Any], field: str, words: str
) -> None:
    sim = simulation()
    body = control_plane()
    body["spec"].update(changes)
    with pytest.raises(Invalid) as refused:
        sim.apply(body)
    causes = [c for c in refused.value.causes if c.field == field]
    assert causes and words in causes[0].message, refused.value.message


def test_upgrade_seconds_must_be_a_number() -> None:
    sim = simulation()
    body = control_plane()
    body["metadata"]["annotations"] = {"sandbox.kubecrew.io/upgrade-seconds": "two minutes"}
    with pytest.raises(Invalid, match="must be a number of seconds"):
        sim.apply(body)
