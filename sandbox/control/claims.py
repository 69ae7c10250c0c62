"""PersistentVolumeClaims (`persistentvolume-controller`, claim worker): binding and provisioning.

A claim without `storageClassName` gets the default class (the DefaultStorageClass admission
plugin's job, done here on the claim's first pass). A pending claim is bound to the smallest
Available volume that fits (class, access modes, size, volume mode, selector, node affinity of
the selected node), or a volume is provisioned for classes of the sandbox's own provisioner
`sandbox.kubecrew.io/hostpath`: at once for `Immediate`, after the scheduler's
`volume.kubernetes.io/selected-node` annotation for `WaitForFirstConsumer`. A bound claim is
checked against its volume (a lost volume, a bind half done) and then handed to `expansion.py`
when a larger size is requested. Volumes are few, so finding one scans them all; claims are
looked up by name.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sandbox.control.expansion import expand
from sandbox.control.runtime import PODS, Controller, Item
from sandbox.control.volumes import (
    BETA_STORAGE_PROVISIONER,
    BIND_COMPLETED,
    BOUND_BY_CONTROLLER,
    CLASSES,
    DEFAULT_CLASS,
    NODES,
    PROVISIONED_BY,
    PROVISIONER,
    PVCS,
    PVS,
    SELECTED_NODE,
    STORAGE_PROVISIONER,
    storage_request,
)
from sandbox.quantity import parse_quantity
from sandbox.selectors import LabelSelector
from sandbox.store import Change, Obj


def _capacity(volume: Obj) -> float:
    return parse_quantity(((volume.get("spec") or {}).get("capacity") or {}).get("storage", "0"))


def _annotations(obj: Obj) -> dict[str, str]:
    found: dict[str, str] = obj["metadata"].get("annotations") or {}
    return found


def _with_annotations(obj: Obj, annotations: dict[str, str]) -> dict[str, Any]:
    merged = {**_annotations(obj), **annotations}
    return {**obj["metadata"], "annotations": merged}


def _phase(obj: Obj) -> str:
    return str((obj.get("status") or {}).get("phase", ""))


class ClaimController(Controller):
    name = "persistentvolume-controller"
    primary = PVCS
    watches = (PVS, CLASSES, PODS)

    def items_for(self, change: Change) -> Iterable[Item]:
        if change.key == PVCS:
            return [(change.namespace, change.name)]
        if change.key == PODS:
            return self._claims_of_pod(change)
        if change.key == PVS:
            ref = (change.object.get("spec") or {}).get("claimRef")
            if ref:
                return [(ref.get("namespace", ""), ref.get("name", ""))]
            return self._pending_claims(None)  # a new Available volume may fit a waiting claim
        return self._pending_claims(change.name)

    def _claims_of_pod(self, change: Change) -> list[Item]:
        names = set()
        for pod in (change.object, change.old):
            for volume in ((pod or {}).get("spec") or {}).get("volumes") or []:
                claim = (volume.get("persistentVolumeClaim") or {}).get("claimName")
                if claim:
                    names.add((change.namespace, claim))
        return sorted(names)

    def _pending_claims(self, class_name: str | None) -> list[Item]:
        return [
            (c["metadata"]["namespace"], c["metadata"]["name"])
            for c in self.list(PVCS)
            if _phase(c) != "Bound"
            and (class_name is None or (c.get("spec") or {}).get("storageClassName") == class_name)
        ]

    def reconcile(self, namespace: str, name: str) -> float | None:
        claim = self.get(PVCS, namespace, name)
        if claim is None or claim["metadata"].get("deletionTimestamp"):
            return None
        spec = claim.get("spec") or {}
        if "storageClassName" not in spec and not spec.get("volumeName"):
            default = self._default_class()
            if default is not None:
                claim = self.write(
                    PVCS,
                    {**claim, "spec": {**spec, "storageClassName": default["metadata"]["name"]}},
                    claim,
                )
        if (claim.get("spec") or {}).get("volumeName"):
            return self._bound(claim)
        return self._pending(claim)

    # -- pending claims ------------------------------------------------------------------------

    def _pending(self, claim: Obj) -> float | None:
        class_name = (claim.get("spec") or {}).get("storageClassName") or ""
        storage_class = self.get(CLASSES, "", class_name) if class_name else None
        delayed = (storage_class or {}).get("volumeBindingMode") == "WaitForFirstConsumer"
        node = _annotations(claim).get(SELECTED_NODE)
        if delayed and not node:
            self.event(
                claim,
                "WaitForFirstConsumer",
                "waiting for first consumer to be created before binding",
            )
            return None
        volume = self._match(claim, class_name, node)
        if volume is not None:
            self._bind(claim, volume)
            return None
        if not class_name:
            self.event(
                claim,
                "FailedBinding",
                "no persistent volumes available for this claim and no storage class is set",
            )
            return None
        if storage_class is None:
            message = f'storageclass.storage.k8s.io "{class_name}" not found'
            self.event(claim, "ProvisioningFailed", message, warning=True)
            return None
        provisioner = storage_class.get("provisioner", "")
        if provisioner != PROVISIONER:
            self.event(
                claim,
                "ExternalProvisioning",
                "Waiting for a volume to be created either by the external provisioner "
                f"'{provisioner}' or manually by the system administrator. If volume creation "
                "is delayed, please verify that the provisioner is running and correctly "
                "registered.",
            )
            return None
        self._provision(claim, storage_class, node)
        return None

    def _default_class(self) -> Obj | None:
        defaults = [c for c in self.list(CLASSES) if _annotations(c).get(DEFAULT_CLASS) == "true"]
        # several defaults: the newest wins, as in Kubernetes
        defaults.sort(
            key=lambda c: (c["metadata"].get("creationTimestamp", ""), c["metadata"]["name"])
        )
        return defaults[-1] if defaults else None

    def _match(self, claim: Obj, class_name: str, node: str | None) -> Obj | None:
        spec = claim.get("spec") or {}
        meta = claim["metadata"]
        wanted = storage_request(claim)
        modes = set(spec.get("accessModes") or [])
        selector = spec.get("selector")
        node_labels = None
        if node:
            node_obj = self.get(NODES, "", node)
            node_labels = (node_obj or {}).get("metadata", {}).get("labels") or {}
        fits = []
        for volume in self.list(PVS):
            vspec = volume.get("spec") or {}
            ref = vspec.get("claimRef")
            if ref and not (
                ref.get("namespace") == meta["namespace"]
                and ref.get("name") == meta["name"]
                and ref.get("uid") in (None, "", meta["uid"])
            ):
                continue
            if volume["metadata"].get("deletionTimestamp") or _phase(volume) in (
                "Released",
                "Failed",
            ):
                continue
            if (vspec.get("storageClassName") or "") != class_name:
                continue
            if not modes <= set(vspec.get("accessModes") or []) or _capacity(volume) < wanted:
                continue
            if vspec.get("volumeMode", "Filesystem") != spec.get("volumeMode", "Filesystem"):
                continue
            if selector is not None and not LabelSelector.from_object(selector).matches(
                volume["metadata"].get("labels") or {}
            ):
                continue
            if node_labels is not None and not _node_fits(vspec, node_labels):
                continue
            fits.append(volume)
        fits.sort(
            key=lambda v: (not v["spec"].get("claimRef"), _capacity(v), v["metadata"]["name"])
        )
        return fits[0] if fits else None

    def _provision(self, claim: Obj, storage_class: Obj, node: str | None) -> None:
        meta = claim["metadata"]
        spec = claim.get("spec") or {}
        provisioner = storage_class["provisioner"]
        claim = self.write(
            PVCS,
            {
                **claim,
                "metadata": _with_annotations(
                    claim, {STORAGE_PROVISIONER: provisioner, BETA_STORAGE_PROVISIONER: provisioner}
                ),
            },
            claim,
        )
        self.event(
            claim,
            "Provisioning",
            f'External provisioner is provisioning volume for claim "{meta["namespace"]}/'
            f'{meta["name"]}"',
        )
        name = f"pvc-{meta['uid']}"
        volume_spec: dict[str, Any] = {
            "capacity": {"storage": spec["resources"]["requests"]["storage"]},
            "accessModes": list(spec.get("accessModes") or []),
            "persistentVolumeReclaimPolicy": storage_class.get("reclaimPolicy", "Delete"),
            "storageClassName": storage_class["metadata"]["name"],
            "volumeMode": spec.get("volumeMode", "Filesystem"),
            "hostPath": {"path": f"/var/lib/sandbox/volumes/{name}", "type": "DirectoryOrCreate"},
        }
        if storage_class.get("mountOptions"):
            volume_spec["mountOptions"] = list(storage_class["mountOptions"])
        if node:
            volume_spec["nodeAffinity"] = {
                "required": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {
                                    "key": "kubernetes.io/hostname",
                                    "operator": "In",
                                    "values": [node],
                                }
                            ]
                        }
                    ]
                }
            }
        volume_spec["claimRef"] = _claim_ref(claim)
        volume = self.get(PVS, "", name) or self.create(
            PVS,
            {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": {"name": name, "annotations": {PROVISIONED_BY: provisioner}},
                "spec": volume_spec,
            },
        )
        self.event(claim, "ProvisioningSucceeded", f"Successfully provisioned volume {name}")
        self._bind(claim, volume)

    def _bind(self, claim: Obj, volume: Obj) -> None:
        vspec = volume.get("spec") or {}
        annotations = {}
        if not vspec.get("claimRef"):
            annotations[BOUND_BY_CONTROLLER] = "yes"
        bound_volume = {
            **volume,
            "metadata": _with_annotations(volume, annotations),
            "spec": {**vspec, "claimRef": _claim_ref(claim)},
            "status": {**(volume.get("status") or {}), "phase": "Bound"},
        }
        volume = self.write(PVS, bound_volume, volume)
        spec = claim.get("spec") or {}
        claim_annotations = {BIND_COMPLETED: "yes"}
        if not spec.get("volumeName"):
            claim_annotations[BOUND_BY_CONTROLLER] = "yes"
        self.write(
            PVCS,
            {
                **claim,
                "metadata": _with_annotations(claim, claim_annotations),
                "spec": {**spec, "volumeName": volume["metadata"]["name"]},
                "status": {
                    "phase": "Bound",
                    "accessModes": list(volume["spec"].get("accessModes") or []),
                    "capacity": dict(volume["spec"].get("capacity") or {}),
                },
            },
            claim,
        )

    # -- bound claims ------------------------------------------------------------------------

    def _bound(self, claim: Obj) -> float | None:
        volume_name = claim["spec"]["volumeName"]
        volume = self.get(PVS, "", volume_name)
        if volume is None:
            if _phase(claim) == "Bound":
                self.event(
                    claim,
                    "ClaimLost",
                    "Bound claim has lost its PersistentVolume. Data on the volume is lost!",
                    warning=True,
                )
                self.write_status(PVCS, claim, {**claim.get("status", {}), "phase": "Lost"})
            return None
        ref = (volume.get("spec") or {}).get("claimRef") or {}
        if ref.get("uid") != claim["metadata"]["uid"] or _phase(claim) != "Bound":
            if not ref or ref.get("uid") in (None, "", claim["metadata"]["uid"]):
                self._bind(claim, volume)  # pre-bound by the user, or a bind half done
            else:
                self.event(
                    claim,
                    "FailedBinding",
                    f'volume "{volume_name}" already bound to a different claim.',
                    warning=True,
                )
            return None
        return expand(self, claim, volume)


def _claim_ref(claim: Obj) -> dict[str, Any]:
    meta = claim["metadata"]
    return {
        "kind": "PersistentVolumeClaim",
        "namespace": meta["namespace"],
        "name": meta["name"],
        "uid": meta["uid"],
        "apiVersion": "v1",
        "resourceVersion": meta.get("resourceVersion", ""),
    }


def _node_fits(volume_spec: dict[str, Any], labels: dict[str, str]) -> bool:
    """Whether a node with `labels` satisfies the volume's required node affinity."""
    terms = (
        ((volume_spec.get("nodeAffinity") or {}).get("required") or {}).get("nodeSelectorTerms")
    ) or []
    if not terms:
        return True
    for term in terms:
        expressions = term.get("matchExpressions") or []
        selector = LabelSelector.from_object({"matchExpressions": expressions})
        if selector.matches(labels):
            return True
    return False


CONTROLLERS: tuple[type[Controller], ...] = (ClaimController,)
