"""Growing a PersistentVolumeClaim: allowed for a bound claim of an expandable StorageClass,
refused with Kubernetes' message otherwise (a pending claim, or a class without expansion)."""

from __future__ import annotations

import pytest

from sandbox.errors import Forbidden
from tests.support.simulation import Simulation

CLASSES = """
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: grow}
provisioner: sandbox.kubecrew.io/hostpath
volumeBindingMode: Immediate
allowVolumeExpansion: true
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fixed}
provisioner: sandbox.kubecrew.io/hostpath
volumeBindingMode: Immediate
"""


def claim(name: str, storage_class: str) -> str:
    return f"""
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: {name}}}
spec:
  storageClassName: {storage_class}
  accessModes: [ReadWriteOnce]
  resources: {{requests: {{storage: 1Gi}}}}
"""


def grow(sim: Simulation, name: str) -> None:
    sim.patch(
        "persistentvolumeclaims",
        "default",
        name,
        {"spec": {"resources": {"requests": {"storage": "2Gi"}}}},
    )


@pytest.fixture
def sim() -> Simulation:
    sim = Simulation()
    sim.apply(CLASSES)
    return sim


def test_a_bound_claim_of_an_expandable_class_grows(sim: Simulation) -> None:
    sim.apply(claim("data", "grow"))
    sim.run_until(
        lambda: (
            sim.get("persistentvolumeclaims", "default", "data")["status"].get("phase") == "Bound"
        ),
        what="the claim is bound",
    )
    grow(sim, "data")
    pvc = sim.get("persistentvolumeclaims", "default", "data")
    assert pvc["spec"]["resources"]["requests"]["storage"] == "2Gi"


@pytest.mark.parametrize(
    ("storage_class", "bind"),
    [("fixed", True), ("standard", False)],
    ids=["class-without-expansion", "pending-claim"],
)
def test_growing_is_refused_without_expansion_or_binding(
    sim: Simulation, storage_class: str, bind: bool
) -> None:
    sim.apply(claim("data", storage_class))
    if bind:
        sim.run_until(
            lambda: (
                sim.get("persistentvolumeclaims", "default", "data")["status"].get("phase")
                == "Bound"
            ),
            what="the claim is bound",
        )
    with pytest.raises(Forbidden) as refused:
        grow(sim, "data")
    assert str(refused.value.message) == (
        'persistentvolumeclaims "data" is forbidden: only dynamically provisioned pvc can be '
        "resized and the storageclass that provisions the pvc must support resize"
    )
