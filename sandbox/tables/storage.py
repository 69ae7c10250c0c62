"""Rows for storage: PersistentVolumes, PersistentVolumeClaims and StorageClasses.

Access modes print in Kubernetes' short form (`RWO,ROX,RWX,RWOP`, always in that order); the
storage class comes from the legacy beta annotation first, as Kubernetes still honours it.
Absent fields read as the API's defaults (phase Pending, volume mode Filesystem, reclaim policy
Retain for volumes and Delete for classes). Quantities print as stored. Reads object JSON only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sandbox.tables.cells import UNSET, items, sub
from sandbox.tables.printer import AGE, NAME, Column, Printer, age_of, name_of, wide

_MODES = (
    ("ReadWriteOnce", "RWO"),
    ("ReadOnlyMany", "ROX"),
    ("ReadWriteMany", "RWX"),
    ("ReadWriteOncePod", "RWOP"),
)
_BETA_CLASS = "volume.beta.kubernetes.io/storage-class"
_DEFAULT_CLASS = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
)


def access_modes(modes: list[Any]) -> str:
    present = set(modes)
    return ",".join(short for mode, short in _MODES if mode in present)


def _storage_class(obj: Mapping[str, Any]) -> str:
    annotations = sub(obj, "metadata", "annotations")
    if _BETA_CLASS in annotations:
        return str(annotations[_BETA_CLASS])
    return str(sub(obj, "spec").get("storageClassName") or "")


def _phase(obj: Mapping[str, Any]) -> str:
    if sub(obj, "metadata").get("deletionTimestamp") is not None:
        return "Terminating"
    return str(sub(obj, "status").get("phase") or "Pending")


def _volume(obj: dict[str, Any], now: float) -> list[Any]:
    spec = sub(obj, "spec")
    claim = spec.get("claimRef")
    claim_text = f"{claim.get('namespace', '')}/{claim.get('name', '')}" if claim else ""
    return [
        name_of(obj),
        str(sub(spec, "capacity").get("storage") or "0"),
        access_modes(items(spec, "accessModes")),
        str(spec.get("persistentVolumeReclaimPolicy") or "Retain"),
        _phase(obj),
        claim_text,
        _storage_class(obj),
        spec.get("volumeAttributesClassName") or UNSET,
        str(sub(obj, "status").get("reason") or ""),
        age_of(obj, now),
        spec.get("volumeMode") or "Filesystem",
    ]


def _claim(obj: dict[str, Any], now: float) -> list[Any]:
    spec, status = sub(obj, "spec"), sub(obj, "status")
    volume = str(spec.get("volumeName") or "")
    capacity = str(sub(status, "capacity").get("storage") or "0") if volume else ""
    modes = access_modes(items(status, "accessModes")) if volume else ""
    return [
        name_of(obj),
        _phase(obj),
        volume,
        capacity,
        modes,
        _storage_class(obj),
        spec.get("volumeAttributesClassName") or UNSET,
        age_of(obj, now),
        spec.get("volumeMode") or "Filesystem",
    ]


def _storage_class_row(obj: dict[str, Any], now: float) -> list[Any]:
    annotations = sub(obj, "metadata", "annotations")
    default = any(annotations.get(key) == "true" for key in _DEFAULT_CLASS)
    return [
        name_of(obj) + (" (default)" if default else ""),
        str(obj.get("provisioner", "")),
        str(obj.get("reclaimPolicy") or "Delete"),
        str(obj.get("volumeBindingMode") or "Immediate"),
        bool(obj.get("allowVolumeExpansion")),
        age_of(obj, now),
    ]


_CLASS = "The storage class, from the beta annotation or spec.storageClassName."
_ATTRIBUTES_CLASS = "The VolumeAttributesClass, if any."
_MODE = "Filesystem or Block."

PRINTERS: Mapping[tuple[str, str], Printer] = {
    ("", "PersistentVolume"): Printer(
        (
            NAME,
            Column("Capacity", "The volume's storage capacity."),
            Column("Access Modes", "How the volume can be mounted."),
            Column("Reclaim Policy", "What happens to the volume when its claim goes."),
            Column("Status", "The volume's phase."),
            Column("Claim", "The claim bound to the volume."),
            Column("StorageClass", _CLASS),
            Column("VolumeAttributesClass", _ATTRIBUTES_CLASS),
            Column("Reason", "Why the volume is in its phase."),
            AGE,
            wide("VolumeMode", _MODE),
        ),
        _volume,
    ),
    ("", "PersistentVolumeClaim"): Printer(
        (
            NAME,
            Column("Status", "The claim's phase."),
            Column("Volume", "The volume bound to the claim."),
            Column("Capacity", "Capacity of the bound volume."),
            Column("Access Modes", "Access modes of the bound volume."),
            Column("StorageClass", _CLASS),
            Column("VolumeAttributesClass", _ATTRIBUTES_CLASS),
            AGE,
            wide("VolumeMode", _MODE),
        ),
        _claim,
    ),
    ("storage.k8s.io", "StorageClass"): Printer(
        (
            NAME,
            Column("Provisioner", "The driver that provisions volumes."),
            Column("ReclaimPolicy", "Reclaim policy of provisioned volumes."),
            Column("VolumeBindingMode", "When volumes are bound and provisioned."),
            Column("AllowVolumeExpansion", "Whether claims may grow."),
            AGE,
        ),
        _storage_class_row,
    ),
}
