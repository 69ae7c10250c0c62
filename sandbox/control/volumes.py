"""PersistentVolumes (`persistentvolume-controller`, volume worker): each volume's phase, and the
reclaim of a volume whose claim is gone.

Kubernetes' PV controller has a claim worker and a volume worker under one name; the claim
worker (binding, provisioning) is `claims.py`, expansion of bound claims `expansion.py`. This
one keeps each volume Available, Bound or Released, and reclaims the volume of a deleted claim:
Delete removes it, Retain leaves it Released, Recycle offers it again. The keys and annotations
of persistent storage, which the claim worker and the scheduler read too, are defined here.
"""

from __future__ import annotations

from collections.abc import Iterable

from sandbox.control.runtime import Controller, Item
from sandbox.quantity import parse_quantity
from sandbox.store import Change, Key, Obj

PVS: Key = ("", "persistentvolumes")
PVCS: Key = ("", "persistentvolumeclaims")
CLASSES: Key = ("storage.k8s.io", "storageclasses")
NODES: Key = ("", "nodes")
PROVISIONER = "sandbox.kubecrew.io/hostpath"
DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
SELECTED_NODE = "volume.kubernetes.io/selected-node"
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
RESIZE_STEP = 2.0  # sandbox seconds each stage of an expansion takes


def storage_request(claim: Obj) -> float:
    requests = ((claim.get("spec") or {}).get("resources") or {}).get("requests") or {}
    return parse_quantity(requests.get("storage", "0"))


class VolumeController(Controller):
    name = "persistentvolume-controller"
    primary = PVS
    watches = (PVCS,)

    def items_for(self, change: Change) -> Iterable[Item]:
        if change.key == PVS:
            return [("", change.name)]
        names = {
            ((obj or {}).get("spec") or {}).get("volumeName") for obj in (change.object, change.old)
        }
        return [("", n) for n in sorted(n for n in names if n)]

    def reconcile(self, namespace: str, name: str) -> float | None:
        volume = self.get(PVS, "", name)
        if volume is None or volume["metadata"].get("deletionTimestamp"):
            return None
        spec = volume.get("spec") or {}
        ref = spec.get("claimRef")
        if not ref:
            self._set_phase(volume, "Available")
            return None
        claim = self.get(PVCS, ref.get("namespace", ""), ref.get("name", ""))
        if claim is not None and ref.get("uid") in (None, "", claim["metadata"]["uid"]):
            if (claim.get("spec") or {}).get("volumeName") == name:
                self._set_phase(volume, "Bound")
            elif not ref.get("uid"):
                self._set_phase(volume, "Available")  # pre-bound, waiting for its claim
            return None
        if not ref.get("uid"):
            self._set_phase(volume, "Available")  # pre-bound to a claim yet to be created
            return None
        self._release(volume)
        return None

    def _release(self, volume: Obj) -> None:
        """The volume's claim is gone: reclaim it as its policy says."""
        policy = (volume.get("spec") or {}).get("persistentVolumeReclaimPolicy", "Retain")
        if policy == "Delete":
            self.delete(PVS, "", volume["metadata"]["name"])
            return
        if policy == "Recycle":  # scrubbed and offered again
            spec = {k: v for k, v in volume["spec"].items() if k != "claimRef"}
            self.write(
                PVS,
                {**volume, "spec": spec, "status": {"phase": "Available"}},
                volume,
            )
            self.event(volume, "RecyclerPod", "Recycler pod: Successfully assigned volume")
            return
        self._set_phase(volume, "Released")

    def _set_phase(self, volume: Obj, phase: str) -> None:
        status = {**(volume.get("status") or {}), "phase": phase}
        if phase != "Released":
            status.pop("reason", None)
            status.pop("message", None)
        self.write_status(PVS, volume, status)


CONTROLLERS: tuple[type[Controller], ...] = (VolumeController,)
