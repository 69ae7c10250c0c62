"""Expansion of a bound PersistentVolumeClaim, in the stages Kubernetes shows.

A larger request on a Bound claim of a class with `allowVolumeExpansion` is resized first by the
(external) resizer: condition Resizing and `allocatedResourceStatuses` ControllerResizeInProgress
for a couple of sandbox seconds, then the volume's capacity grows and the claim waits in
FileSystemResizePending until a live pod on a node mounts it, when the kubelet's file-system
resize finishes and the claim's capacity follows. Driven by the claim worker (`claims.py`), with
its events; it reads and writes through the controller it is handed.
"""

from __future__ import annotations

from typing import Any

from sandbox.clock import parse_time
from sandbox.control.runtime import PODS, Controller
from sandbox.control.volumes import CLASSES, PVCS, PVS, storage_request
from sandbox.quantity import parse_quantity
from sandbox.store import Obj

RESIZE_STEP = 2.0  # sandbox seconds each stage of an expansion takes


def expand(ctl: Controller, claim: Obj, volume: Obj) -> float | None:
    """Move a bound claim's expansion one stage on; seconds until the next stage, if timed."""
    status = claim.get("status") or {}
    wanted = storage_request(claim)
    have = parse_quantity((status.get("capacity") or {}).get("storage", "0"))
    if wanted <= have:
        return None
    requested = claim["spec"]["resources"]["requests"]["storage"]
    class_name = claim["spec"].get("storageClassName") or ""
    storage_class = ctl.get(CLASSES, "", class_name) if class_name else None
    if not (storage_class or {}).get("allowVolumeExpansion"):
        return None  # the API refuses such a change (PersistentVolumeClaimResize admission)
    now = ctl.ctx.clock.timestamp()
    conditions = {c["type"]: c for c in status.get("conditions") or []}
    resizing = conditions.get("Resizing")
    pending = conditions.get("FileSystemResizePending")
    volume_name = volume["metadata"]["name"]
    if resizing is None and pending is None:
        ctl.event(claim, "Resizing", f"External resizer is resizing volume {volume_name}")
        _resize_status(ctl, claim, requested, "ControllerResizeInProgress", "Resizing", now)
        return RESIZE_STEP
    if resizing is not None:
        left = parse_time(resizing["lastTransitionTime"]).timestamp() + RESIZE_STEP - ctl.now()
        if left > 0:
            return left
        capacity = {**(volume["spec"].get("capacity") or {}), "storage": requested}
        ctl.write(PVS, {**volume, "spec": {**volume["spec"], "capacity": capacity}}, volume)
        ctl.event(claim, "FileSystemResizeRequired", "Require file system resize of volume on node")
        _resize_status(
            ctl,
            claim,
            requested,
            "NodeResizePending",
            "FileSystemResizePending",
            now,
            message="Waiting for user to (re-)start a pod to finish file system resize of "
            "volume on node.",
        )
        return RESIZE_STEP
    node = _mounted_on(ctl, claim)
    if node is None:
        return None  # a pod mounting the claim wakes us
    ctl.event(
        claim,
        "FileSystemResizeSuccessful",
        f'MountVolume.NodeExpandVolume succeeded for volume "{volume_name}" {node}',
    )
    done = {k: v for k, v in status.items() if k not in ("conditions", "allocatedResourceStatuses")}
    done["capacity"] = {**(status.get("capacity") or {}), "storage": requested}
    done["allocatedResources"] = {"storage": requested}
    ctl.write_status(PVCS, claim, done)
    return None


def _resize_status(
    ctl: Controller,
    claim: Obj,
    requested: str,
    stage: str,
    condition: str,
    now: str,
    *,
    message: str = "",
) -> None:
    status = dict(claim.get("status") or {})
    entry: dict[str, Any] = {
        "type": condition,
        "status": "True",
        "lastProbeTime": None,
        "lastTransitionTime": now,
    }
    if message:
        entry["message"] = message
    status["conditions"] = [entry]
    status["allocatedResources"] = {"storage": requested}
    status["allocatedResourceStatuses"] = {"storage": stage}
    ctl.write_status(PVCS, claim, status)


def _mounted_on(ctl: Controller, claim: Obj) -> str | None:
    """A node where a live pod mounts the claim (the kubelet there finishes a resize)."""
    name = claim["metadata"]["name"]
    for pod in ctl.list(PODS, claim["metadata"]["namespace"]):
        spec = pod.get("spec") or {}
        if not spec.get("nodeName") or pod["metadata"].get("deletionTimestamp"):
            continue
        for volume in spec.get("volumes") or []:
            if (volume.get("persistentVolumeClaim") or {}).get("claimName") == name:
                return str(spec["nodeName"])
    return None
