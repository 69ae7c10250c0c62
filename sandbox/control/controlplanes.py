"""Cluster API KubeadmControlPlanes (`kubeadm-control-plane-controller`): the sandbox's own API
server is the control plane, so a KubeadmControlPlane describes it and upgrades it.

A real KubeadmControlPlane creates control-plane Machines, runs kubeadm on them and, when
`spec.version` changes, replaces them one at a time. Here the control plane is the API server
the agent talks to and its version is the world's (`World.control_plane_version`, what `/version`
and `kubectl version` report), so the controller acts out the upgrade on the sandbox clock:
- `status.version` is the version the control plane runs. A KubeadmControlPlane created with
  another `spec.version` adopts the running one there; a newer spec then starts an upgrade, an
  older one changes nothing (Cluster API's webhook refuses to edit a spec into a downgrade);
- a `spec.version` a patch or one minor release ahead rolls the control plane:
  `MachinesSpecUpToDate` and `Ready` are False (`RollingUpdateInProgress`) while
  `updatedReplicas` counts the replicas rolled so far, one every `upgradeSeconds / replicas`;
  `upgradeSeconds` after the roll began (annotation `sandbox.kubecrew.io/upgrade-seconds`,
  default 120) the world's version becomes `spec.version`, and `status.version` follows;
- a `spec.version` two or more minors ahead (the control plane moved under the object, or it was
  created so; edits that skip a minor are refused by the webhook) is not rolled:
  `MachinesSpecUpToDate` is False with the sandbox's own reason `UnsupportedVersionSkew`;
- the API server always answers: `initialized`, `ready` (API SERVER AVAILABLE), every replica
  ready and `Available` True, during a roll too (the rolled one surges in before one goes);
- as Cluster API's cluster controller does for the object a Cluster's `spec.controlPlaneRef`
  names, the KubeadmControlPlane gets that Cluster's name label (the CLUSTER column) and the
  Cluster as controlling owner.
Several KubeadmControlPlanes all describe the one control plane: the first roll to finish moves
it, and the others adopt the new version when they next reconcile.

Left out: control-plane Machines and Nodes (the sandbox's control plane runs on none, so
`replicas` is only counted), rolling for `kubeadmConfigSpec`, `machineTemplate` or
`rolloutAfter` changes (kept, not acted on), remediation, certificates and the etcd and
component health conditions, and noticing a version moved by the admin endpoint
(`PUT /kubecrew/v1/version`) before something wakes the object.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from sandbox.clock import parse_time
from sandbox.clusterapi.vocabulary import (
    AVAILABLE,
    CLUSTER_NAME,
    CLUSTERS,
    CONTROL_PLANE_GROUP,
    CONTROL_PLANE_KIND,
    CONTROL_PLANES,
    DEFAULT_UPGRADE_SECONDS,
    MACHINES_SPEC_UP_TO_DATE,
    READY,
    ROLLING_UPDATE_IN_PROGRESS,
    UPGRADE_SECONDS,
    condition,
    find_condition,
)
from sandbox.control.ownership import controller_ref, controller_uid
from sandbox.control.rollout import drop_condition, set_condition
from sandbox.control.runtime import Controller, Item
from sandbox.store import Change, Obj
from sandbox.version import is_version, precedes, release, skips_a_minor

UNSUPPORTED_SKEW = "UnsupportedVersionSkew"  # the sandbox's reason: the spec skips a minor


class KubeadmControlPlaneController(Controller):
    name = "kubeadm-control-plane-controller"
    primary = CONTROL_PLANES
    watches = (CLUSTERS,)

    def items_for(self, change: Change) -> Iterable[Item]:
        if change.key == CONTROL_PLANES:
            yield (change.namespace, change.name)
            return
        for cluster in (change.object, change.old):
            name = _control_plane_name(cluster) if cluster else None
            if name:
                yield (change.namespace, name)

    def reconcile(self, namespace: str, name: str) -> float | None:
        kcp = self.get(CONTROL_PLANES, namespace, name)
        if kcp is None or kcp["metadata"].get("deletionTimestamp"):
            return None
        kcp = self._owned_by_cluster(kcp)
        running = self.ctx.world.control_plane_version
        wanted = (kcp.get("spec") or {}).get("version")
        if not is_version(wanted) or not precedes(running, wanted):
            self._write(kcp, running, _replicas(kcp), self._true(MACHINES_SPEC_UP_TO_DATE))
            return None
        if skips_a_minor(running, wanted):
            major, minor, _ = release(running)
            blocked = self._false(
                UNSUPPORTED_SKEW,
                f"cannot upgrade the control plane from {running} to {wanted}: kubeadm upgrades "
                f"one minor version at a time; set spec.version to a v{major}.{minor + 1}.x "
                "release first",
            )
            self._write(kcp, running, 0, blocked)
            return None
        return self._roll(kcp, running, wanted)

    # -- the upgrade -----------------------------------------------------------------------------

    def _roll(self, kcp: Obj, running: str, wanted: str) -> float | None:
        """One look at an upgrade: replicas rolled so far, or the world moved once all are;
        returns the seconds until the next replica is done."""
        replicas = _replicas(kcp)
        seconds = _upgrade_seconds(kcp)
        rolling = find_condition(kcp, MACHINES_SPEC_UP_TO_DATE) or {}
        stamp = rolling.get("lastTransitionTime")
        if rolling.get("reason") != ROLLING_UPDATE_IN_PROGRESS or not stamp:
            stamp = self.ctx.clock.timestamp()  # the roll starts now
        elapsed = self.now() - parse_time(stamp).timestamp()
        if elapsed >= seconds:
            self.ctx.world.control_plane_version = wanted
            self._write(kcp, wanted, replicas, self._true(MACHINES_SPEC_UP_TO_DATE))
            return None
        each = seconds / max(replicas, 1)
        updated = min(int((elapsed + 1e-6) // each), replicas)
        outdated = replicas - updated
        message = f"Rolling {outdated} replicas with outdated spec ({updated} replicas up to date)"
        progress = {
            **self._false(ROLLING_UPDATE_IN_PROGRESS, message),
            "lastTransitionTime": stamp,
        }
        self._write(kcp, running, updated, progress)
        return min((updated + 1) * each, seconds) - elapsed

    # -- status ----------------------------------------------------------------------------------

    def _write(self, kcp: Obj, version: str, updated: int, up_to_date: dict[str, Any]) -> None:
        """Status of a control plane that answers, runs `version` and has `updated` replicas of
        its spec; Ready says what `up_to_date` (MachinesSpecUpToDate) says."""
        replicas = _replicas(kcp)
        status: dict[str, Any] = {
            **(kcp.get("status") or {}),
            "replicas": replicas,
            "updatedReplicas": updated,
            "readyReplicas": replicas,
            "unavailableReplicas": 0,
            "version": version,
            "initialized": True,
            "ready": True,
            "observedGeneration": kcp["metadata"].get("generation"),
        }
        status = set_condition(status, self._true(AVAILABLE))
        for kind in (MACHINES_SPEC_UP_TO_DATE, READY):
            if (find_condition(kcp, kind) or {}).get("reason") != up_to_date.get("reason"):
                # a roll starting after a blocked spec starts its clock now, not when blocked
                status = drop_condition(status, kind)
            status = set_condition(status, {**up_to_date, "type": kind}, force=True)
        self.write_status(CONTROL_PLANES, kcp, status)

    def _true(self, kind: str) -> dict[str, Any]:
        return condition(kind, "True", stamp=self.ctx.clock.timestamp())

    def _false(self, reason: str, message: str) -> dict[str, Any]:
        stamp = self.ctx.clock.timestamp()
        return condition(
            MACHINES_SPEC_UP_TO_DATE,
            "False",
            stamp=stamp,
            reason=reason,
            message=message,
            severity="Warning",
        )

    def _owned_by_cluster(self, kcp: Obj) -> Obj:
        """The Cluster naming this object in `spec.controlPlaneRef` labels and owns it."""
        meta = kcp["metadata"]
        cluster = next(
            (
                c
                for c in self.list(CLUSTERS, meta["namespace"])
                if _control_plane_name(c) == meta["name"]
            ),
            None,
        )
        if cluster is None:
            return kcp
        labels = {**(meta.get("labels") or {}), CLUSTER_NAME: cluster["metadata"]["name"]}
        refs = list(meta.get("ownerReferences") or ())
        if controller_uid(kcp) is None:
            refs.append(controller_ref(cluster))
        new_meta = {**meta, "labels": labels, "ownerReferences": refs}
        if new_meta == meta:
            return kcp
        return self.write(CONTROL_PLANES, {**kcp, "metadata": new_meta}, kcp)


def _control_plane_name(cluster: Obj) -> str | None:
    """The KubeadmControlPlane a Cluster's `spec.controlPlaneRef` names in its namespace."""
    ref = (cluster.get("spec") or {}).get("controlPlaneRef") or {}
    group = str(ref.get("apiVersion") or "").rpartition("/")[0]
    namespace = ref.get("namespace") or cluster["metadata"].get("namespace")
    if ref.get("kind") != CONTROL_PLANE_KIND or group != CONTROL_PLANE_GROUP:
        return None
    if namespace != cluster["metadata"].get("namespace"):
        return None
    return str(ref.get("name") or "") or None


def _replicas(kcp: Obj) -> int:
    replicas = (kcp.get("spec") or {}).get("replicas")
    return replicas if isinstance(replicas, int) and replicas > 0 else 1


def _upgrade_seconds(kcp: Obj) -> float:
    value = (kcp["metadata"].get("annotations") or {}).get(UPGRADE_SECONDS)
    try:
        seconds = float(value) if value is not None else DEFAULT_UPGRADE_SECONDS
    except ValueError:
        return (
            DEFAULT_UPGRADE_SECONDS  # the webhook refuses such a value; an old object may hold one
        )
    return seconds if 0 <= seconds < math.inf else DEFAULT_UPGRADE_SECONDS


CONTROLLERS: tuple[type[Controller], ...] = (KubeadmControlPlaneController,)
