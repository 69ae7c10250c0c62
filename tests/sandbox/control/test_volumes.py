"""Claims get the default class, bind to fitting volumes or get one provisioned, grow when asked,
and their volumes are reclaimed when they go.

Only the persistentvolume-controller runs; the tests play the scheduler by writing the
`volume.kubernetes.io/selected-node` annotation and binding pods themselves.
"""

from __future__ import annotations

from typing import Any

import pytest

from sandbox.store import Obj
from tests.support.playing import pod
from tests.support.simulation import Simulation, condition


@pytest.fixture
def sim() -> Simulation:
    return Simulation(nodes=2, only=("persistentvolume-controller",))


def storage_class(sim: Simulation, name: str, **fields: Any) -> Obj:
    body = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": "sandbox.kubecrew.io/hostpath",
        "reclaimPolicy": "Delete",
        "volumeBindingMode": "Immediate",
        **fields,
    }
    return sim.apply(body)[0]


def claim(sim: Simulation, name: str = "data", *, size: str = "1Gi", **spec: Any) -> Obj:
    body = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": size}},
        **spec,
    }
    manifest = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": body,
    }
    return sim.apply(manifest)[0]


def volume(sim: Simulation, name: str, *, size: str, **spec: Any) -> Obj:
    body = {
        "capacity": {"storage": size},
        "accessModes": ["ReadWriteOnce"],
        "persistentVolumeReclaimPolicy": "Retain",
        "storageClassName": "",
        "hostPath": {"path": f"/mnt/{name}"},
        **spec,
    }
    manifest = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": body,
    }
    return sim.apply(manifest)[0]


def get_claim(sim: Simulation, name: str = "data") -> Obj:
    found = sim.get("persistentvolumeclaims", "default", name)
    assert found is not None
    return found


def get_volume(sim: Simulation, name: str) -> Obj:
    found = sim.get("persistentvolumes", "", name)
    assert found is not None
    return found


def messages(sim: Simulation, obj: Obj, reason: str) -> list[str]:
    return [e["message"] for e in sim.events_for(obj, reason=reason)]


def test_claim_without_class_gets_the_default_class(sim: Simulation) -> None:
    claim(sim)

    assert get_claim(sim)["spec"]["storageClassName"] == "standard"


def test_immediate_class_provisions_and_binds(sim: Simulation) -> None:
    storage_class(sim, "fast", reclaimPolicy="Retain")
    created = claim(sim, storageClassName="fast", size="2Gi")

    bound = get_claim(sim)
    name = f"pvc-{created['metadata']['uid']}"
    assert bound["spec"]["volumeName"] == name
    assert bound["status"] == {
        "phase": "Bound",
        "accessModes": ["ReadWriteOnce"],
        "capacity": {"storage": "2Gi"},
    }
    annotations = bound["metadata"]["annotations"]
    assert annotations["pv.kubernetes.io/bind-completed"] == "yes"
    assert annotations["pv.kubernetes.io/bound-by-controller"] == "yes"
    provisioned = get_volume(sim, name)
    assert provisioned["status"]["phase"] == "Bound"
    assert provisioned["spec"]["claimRef"]["uid"] == created["metadata"]["uid"]
    assert provisioned["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert provisioned["spec"]["storageClassName"] == "fast"
    assert "nodeAffinity" not in provisioned["spec"]
    assert provisioned["metadata"]["annotations"]["pv.kubernetes.io/provisioned-by"] == (
        "sandbox.kubecrew.io/hostpath"
    )
    assert messages(sim, bound, "ProvisioningSucceeded") == [
        f"Successfully provisioned volume {name}"
    ]
    assert messages(sim, bound, "Provisioning") == [
        'External provisioner is provisioning volume for claim "default/data"'
    ]


def test_wait_for_first_consumer_waits_for_the_selected_node(sim: Simulation) -> None:
    claim(sim)  # the default class "standard" is WaitForFirstConsumer
    sim.run_for(30)

    waiting = get_claim(sim)
    assert waiting["status"]["phase"] == "Pending"
    assert sim.list("persistentvolumes") == []
    assert messages(sim, waiting, "WaitForFirstConsumer") == [
        "waiting for first consumer to be created before binding"
    ]

    selected = {"metadata": {"annotations": {"volume.kubernetes.io/selected-node": "node-2"}}}
    sim.patch("persistentvolumeclaims", "default", "data", selected)

    bound = get_claim(sim)
    assert bound["status"]["phase"] == "Bound"
    provisioned = get_volume(sim, bound["spec"]["volumeName"])
    terms = provisioned["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
    assert terms[0]["matchExpressions"] == [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-2"]}
    ]


def test_unknown_class_fails_provisioning(sim: Simulation) -> None:
    claim(sim, storageClassName="fast")

    pending = get_claim(sim)
    assert pending["status"]["phase"] == "Pending"
    events = sim.events_for(pending, reason="ProvisioningFailed")
    assert [(e["type"], e["message"]) for e in events] == [
        ("Warning", 'storageclass.storage.k8s.io "fast" not found')
    ]

    storage_class(sim, "fast")  # the class arriving later provisions the claim

    assert get_claim(sim)["status"]["phase"] == "Bound"


def test_claim_binds_the_smallest_fitting_available_volume(sim: Simulation) -> None:
    volume(sim, "small", size="1Gi")
    volume(sim, "medium", size="5Gi")
    volume(sim, "large", size="10Gi")
    assert get_volume(sim, "medium")["status"]["phase"] == "Available"

    claim(sim, size="3Gi", storageClassName="")

    bound = get_claim(sim)
    assert bound["spec"]["volumeName"] == "medium"
    assert bound["status"]["capacity"] == {"storage": "5Gi"}
    medium = get_volume(sim, "medium")
    assert medium["status"]["phase"] == "Bound"
    assert medium["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"] == "yes"
    assert get_volume(sim, "large")["status"]["phase"] == "Available"


def test_claim_without_fitting_volume_or_class_waits(sim: Simulation) -> None:
    volume(sim, "small", size="1Gi")
    claim(sim, size="3Gi", storageClassName="")

    pending = get_claim(sim)
    assert pending["status"]["phase"] == "Pending"
    assert messages(sim, pending, "FailedBinding") == [
        "no persistent volumes available for this claim and no storage class is set"
    ]

    volume(sim, "big", size="4Gi")  # a new volume wakes the waiting claim

    assert get_claim(sim)["spec"]["volumeName"] == "big"


def test_expansion_grows_the_volume_and_then_the_claim(sim: Simulation) -> None:
    storage_class(sim, "fast", allowVolumeExpansion=True)
    claim(sim, storageClassName="fast")
    bound = get_claim(sim)
    name = bound["spec"]["volumeName"]
    bigger = {"spec": {"resources": {"requests": {"storage": "5Gi"}}}}
    sim.patch("persistentvolumeclaims", "default", "data", bigger)

    resizing = condition(get_claim(sim), "Resizing")
    assert resizing is not None and resizing["status"] == "True"

    sim.run_for(3)

    assert get_volume(sim, name)["spec"]["capacity"] == {"storage": "5Gi"}
    pending_claim = get_claim(sim)
    assert condition(pending_claim, "FileSystemResizePending") is not None
    assert pending_claim["status"]["capacity"] == {"storage": "1Gi"}

    volumes = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    sim.apply(pod("db", {"name": "db", "image": "postgres:16"}, node="node-1", volumes=volumes))
    sim.run_for(3)

    grown = get_claim(sim)
    assert grown["status"]["capacity"] == {"storage": "5Gi"}
    assert "conditions" not in grown["status"]
    assert messages(sim, grown, "FileSystemResizeSuccessful")


def test_deleting_the_claim_deletes_a_delete_policy_volume(sim: Simulation) -> None:
    storage_class(sim, "fast")
    claim(sim, storageClassName="fast")
    name = get_claim(sim)["spec"]["volumeName"]

    sim.delete("persistentvolumeclaims", "default", "data")

    assert sim.get("persistentvolumes", "", name) is None


def test_deleting_the_claim_releases_a_retained_volume(sim: Simulation) -> None:
    volume(sim, "kept", size="1Gi")
    claim(sim, storageClassName="")
    assert get_claim(sim)["spec"]["volumeName"] == "kept"

    sim.delete("persistentvolumeclaims", "default", "data")

    released = get_volume(sim, "kept")
    assert released["status"]["phase"] == "Released"
    claim(sim, "again", storageClassName="")  # a released volume is not offered again
    assert get_claim(sim, "again")["status"]["phase"] == "Pending"


def test_volume_pre_bound_to_a_claim_is_bound_to_it(sim: Simulation) -> None:
    volume(sim, "reserved", size="10Gi", claimRef={"namespace": "default", "name": "data"})
    volume(sim, "exact", size="1Gi")

    claim(sim, storageClassName="")

    assert get_claim(sim)["spec"]["volumeName"] == "reserved"
    reserved = get_volume(sim, "reserved")
    assert "pv.kubernetes.io/bound-by-controller" not in (
        reserved["metadata"].get("annotations") or {}
    )
