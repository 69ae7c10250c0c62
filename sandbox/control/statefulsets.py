"""The StatefulSet controller: pods with stable names and storage, created and replaced in order.

A StatefulSet of N replicas owns pods `<name>-0 .. <name>-N-1` (shifted by `spec.ordinals.start`)
and, per pod, one PersistentVolumeClaim `<template>-<name>-<ordinal>` per volumeClaimTemplate,
created before the pod and kept on scale down unless `persistentVolumeClaimRetentionPolicy` says
otherwise. `OrderedReady` creates ordinal i+1 only once i is Running and Ready and removes the
highest ordinal first, one at a time; `Parallel` does both at once. A template change becomes a
new ControllerRevision; `RollingUpdate` replaces pods from the highest ordinal down to the
partition, one at a time, each only once the others are healthy; `OnDelete` waits for people.

The ControllerRevision helpers at the bottom are shared with the DaemonSet controller (both
kinds version their pod template the same way, and `kubectl rollout history` reads them).

This module knows pods only through their labels, status and ownerReferences: binding is the
scheduler's, running and readiness the kubelet's.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from sandbox.control.ownership import controller_ref, controller_uid
from sandbox.control.readiness import ready_for, ready_to_count
from sandbox.control.runtime import PODS, Controller
from sandbox.errors import ApiError
from sandbox.jsoncopy import deep_copy
from sandbox.naming import spell
from sandbox.store import Key, Obj

STATEFULSETS: Key = ("apps", "statefulsets")
REVISIONS: Key = ("apps", "controllerrevisions")
CLAIMS: Key = ("", "persistentvolumeclaims")

POD_NAME = "statefulset.kubernetes.io/pod-name"
POD_INDEX = "apps.kubernetes.io/pod-index"
REVISION_HASH = "controller-revision-hash"


class StatefulSetController(Controller):
    name = "statefulset-controller"
    primary = STATEFULSETS
    watches = (PODS,)

    def reconcile(self, namespace: str, name: str) -> float | None:
        sts = self.get(STATEFULSETS, namespace, name)
        if sts is None or sts["metadata"].get("deletionTimestamp"):
            return None
        plan = _Plan(self, sts)
        if not plan.scale():
            plan.condemn()
        if not plan.blocked:
            plan.roll()
        plan.forget_scaled_claims()
        return self._write_status(sts, plan)

    def _write_status(self, sts: Obj, plan: _Plan) -> float | None:
        pods = [p for p in self.owned_pods(sts).values() if not _deleting(p)]
        min_ready = int(sts["spec"].get("minReadySeconds") or 0)
        now = self.now()
        ready = [p for p in pods if ready_to_count(p)]
        available = [p for p in ready if ready_for(p, now) >= min_ready]
        current, update = plan.current, plan.update
        updated = sum(1 for p in pods if _revision(p) == update)
        replicas = int(sts["spec"].get("replicas", 1))
        if updated == replicas and len(ready) == replicas and len(pods) == replicas:
            current = update  # the rollout is complete: the update revision becomes current
        status: dict[str, Any] = {
            "observedGeneration": sts["metadata"].get("generation", 1),
            "replicas": len(pods),
            "readyReplicas": len(ready),
            "currentReplicas": sum(1 for p in pods if _revision(p) == current),
            "updatedReplicas": updated,
            "currentRevision": current,
            "updateRevision": update,
            "collisionCount": int((sts.get("status") or {}).get("collisionCount") or 0),
            "availableReplicas": len(available),
        }
        for omitted in ("readyReplicas", "currentReplicas", "updatedReplicas"):
            if not status[omitted]:
                del status[omitted]
        self.write_status(STATEFULSETS, sts, status)
        waiting = [min_ready - ready_for(p, now) for p in ready if p not in available]
        return max(min(waiting), 0.5) if waiting else None

    # -- pods and claims -------------------------------------------------------------------------

    def owned_pods(self, sts: Obj) -> dict[str, Obj]:
        uid = sts["metadata"]["uid"]
        return {
            p["metadata"]["name"]: p
            for p in self.ctx.index.owned(PODS, uid)
            if controller_uid(p) == uid
        }

    def create_pod(self, sts: Obj, ordinal: int, revision: str, template: Obj) -> None:
        name = sts["metadata"]["name"]
        for claim in self._claims_for(sts, ordinal):
            self._ensure_claim(sts, claim, f"{name}-{ordinal}")
        pod = self.create(PODS, _new_pod(sts, ordinal, revision, template))
        self.event(
            sts,
            "SuccessfulCreate",
            f"create Pod {pod['metadata']['name']} in StatefulSet {name} successful",
        )

    def delete_pod(self, sts: Obj, pod: Obj) -> None:
        pod_name = pod["metadata"]["name"]
        self.delete(PODS, pod["metadata"]["namespace"], pod_name)
        self.event(
            sts,
            "SuccessfulDelete",
            f"delete Pod {pod_name} in StatefulSet {sts['metadata']['name']} successful",
        )

    def _claims_for(self, sts: Obj, ordinal: int) -> list[Obj]:
        name = sts["metadata"]["name"]
        selector = (sts["spec"].get("selector") or {}).get("matchLabels") or {}
        policy = sts["spec"].get("persistentVolumeClaimRetentionPolicy") or {}
        claims = []
        for template in sts["spec"].get("volumeClaimTemplates") or []:
            meta = template.get("metadata") or {}
            labels = {**(meta.get("labels") or {}), **selector}
            claim_meta: dict[str, Any] = {
                "name": f"{meta['name']}-{name}-{ordinal}",
                "namespace": sts["metadata"]["namespace"],
                "labels": labels,
            }
            if meta.get("annotations"):
                claim_meta["annotations"] = dict(meta["annotations"])
            if policy.get("whenDeleted") == "Delete":
                claim_meta["ownerReferences"] = [controller_ref(sts)]
            spec = deep_copy(template.get("spec") or {})
            claims.append(
                {
                    "apiVersion": "v1",
                    "kind": "PersistentVolumeClaim",
                    "metadata": claim_meta,
                    "spec": spec,
                }
            )
        return claims

    def _ensure_claim(self, sts: Obj, claim: Obj, pod_name: str) -> None:
        meta = claim["metadata"]
        if self.get(CLAIMS, meta["namespace"], meta["name"]) is not None:
            return
        self.create(CLAIMS, claim)
        self.event(
            sts,
            "SuccessfulCreate",
            f"create Claim {meta['name']} Pod {pod_name} in StatefulSet "
            f"{sts['metadata']['name']} success",
        )

    def delete_claims(self, sts: Obj, ordinal: int) -> None:
        for claim in self._claims_for(sts, ordinal):
            meta = claim["metadata"]
            if self.get(CLAIMS, meta["namespace"], meta["name"]) is not None:
                self.delete(CLAIMS, meta["namespace"], meta["name"])
                self.event(
                    sts,
                    "SuccessfulDelete",
                    f"delete Claim {meta['name']} in StatefulSet {sts['metadata']['name']} success",
                )


class _Plan:
    """One pass over a StatefulSet: which pods to create, delete or replace now."""

    def __init__(self, ctl: StatefulSetController, sts: Obj) -> None:
        self.ctl, self.sts = ctl, sts
        spec = sts["spec"]
        self.replicas = int(spec.get("replicas", 1))
        self.start = int((spec.get("ordinals") or {}).get("start") or 0)
        self.parallel = spec.get("podManagementPolicy") == "Parallel"
        strategy = spec.get("updateStrategy") or {}
        self.rolling = strategy.get("type", "RollingUpdate") == "RollingUpdate"
        self.partition = int((strategy.get("rollingUpdate") or {}).get("partition") or 0)
        owned = ctl.owned_pods(sts)
        known = (sts.get("status") or {}).get("currentRevision")
        in_use = {_revision(p) for p in owned.values()} | ({known} if known else set())
        self.update, self.revisions = sync_revisions(
            ctl, sts, spec.get("template") or {}, name=sts["metadata"]["name"], in_use=in_use
        )
        self.current = known if known in self.revisions else self.update
        self.blocked = False
        self.pods: dict[int, Obj] = {}
        self.condemned: list[tuple[int, Obj]] = []
        prefix = sts["metadata"]["name"] + "-"
        wanted = range(self.start, self.start + self.replicas)
        for pod_name, pod in owned.items():
            ordinal = _ordinal(pod_name, prefix)
            if ordinal is not None and ordinal in wanted:
                self.pods[ordinal] = pod
            else:
                self.condemned.append((-1 if ordinal is None else ordinal, pod))
        self.condemned.sort(key=lambda pair: pair[0], reverse=True)

    def _revision_for(self, ordinal: int) -> str:
        if self.rolling and ordinal < self.start + self.partition:
            return self.current
        return self.update

    def scale(self) -> bool:
        """Create missing pods and replace failed ones; True when ordering made it stop."""
        for ordinal in range(self.start, self.start + self.replicas):
            pod = self.pods.get(ordinal)
            if pod is None:
                revision = self._revision_for(ordinal)
                template = self.revisions.get(revision) or self.revisions[self.update]
                self.ctl.create_pod(self.sts, ordinal, revision, template)
                self.pods[ordinal] = {}  # created: not healthy yet
            elif _phase(pod) == "Failed" and not _deleting(pod):
                self.ctl.event(
                    self.sts,
                    "RecreatingFailedPod",
                    f"StatefulSet {self.sts['metadata']['namespace']}/"
                    f"{self.sts['metadata']['name']} is recreating failed Pod "
                    f"{pod['metadata']['name']}",
                    warning=True,
                )
                self.ctl.delete_pod(self.sts, pod)
                self.pods[ordinal] = {}
            if not healthy(self.pods[ordinal]):
                self.blocked = True
                if not self.parallel:
                    return True
        return False

    def condemn(self) -> None:
        """Remove pods beyond the replica count: highest first, one at a time when ordered."""
        for _, pod in self.condemned:
            if _deleting(pod):
                if not self.parallel:
                    self.blocked = True
                    return
                continue
            if not self.parallel and self.blocked:
                return
            self.ctl.delete_pod(self.sts, pod)
            self.blocked = True
            if not self.parallel:
                return

    def roll(self) -> None:
        """RollingUpdate: replace the highest out-of-date pod at or above the partition."""
        if not self.rolling or self.condemned:
            return
        first = self.start + self.partition
        for ordinal in range(self.start + self.replicas - 1, first - 1, -1):
            pod = self.pods[ordinal]
            if _revision(pod) == self.update:
                continue
            if not _deleting(pod):
                self.ctl.delete_pod(self.sts, pod)
            return

    def forget_scaled_claims(self) -> None:
        policy = self.sts["spec"].get("persistentVolumeClaimRetentionPolicy") or {}
        if policy.get("whenScaled") != "Delete":
            return
        for ordinal, pod in self.condemned:
            if ordinal >= 0 and self.ctl.get(PODS, *_ref(pod)) is None:
                self.ctl.delete_claims(self.sts, ordinal)


def _new_pod(sts: Obj, ordinal: int, revision: str, template: Obj) -> Obj:
    sts_meta = sts["metadata"]
    name = f"{sts_meta['name']}-{ordinal}"
    template_meta = template.get("metadata") or {}
    labels = {
        **(template_meta.get("labels") or {}),
        POD_NAME: name,
        POD_INDEX: str(ordinal),
        REVISION_HASH: revision,
    }
    meta: dict[str, Any] = {
        "name": name,
        "namespace": sts_meta["namespace"],
        "labels": labels,
        "ownerReferences": [controller_ref(sts)],
    }
    if template_meta.get("annotations"):
        meta["annotations"] = dict(template_meta["annotations"])
    spec = deep_copy(template.get("spec") or {})
    spec["hostname"] = name
    if sts["spec"].get("serviceName"):
        spec["subdomain"] = sts["spec"]["serviceName"]
    volumes = {v["name"]: v for v in spec.get("volumes") or []}
    for claim_template in sts["spec"].get("volumeClaimTemplates") or []:
        claim = claim_template["metadata"]["name"]
        volumes[claim] = {
            "name": claim,
            "persistentVolumeClaim": {"claimName": f"{claim}-{sts_meta['name']}-{ordinal}"},
        }
    if volumes:
        spec["volumes"] = list(volumes.values())
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _ordinal(name: str, prefix: str) -> int | None:
    if not name.startswith(prefix):
        return None
    rest = name[len(prefix) :]
    return int(rest) if re.fullmatch(r"0|[1-9][0-9]*", rest) else None


def _ref(obj: Obj) -> tuple[str, str]:
    return obj["metadata"].get("namespace", ""), obj["metadata"]["name"]


def _revision(pod: Obj) -> str:
    return str(((pod.get("metadata") or {}).get("labels") or {}).get(REVISION_HASH, ""))


def _phase(pod: Obj) -> str:
    return str((pod.get("status") or {}).get("phase", ""))


def _deleting(pod: Obj) -> bool:
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))


# -- pod facts every workload controller reads ---------------------------------------------------


def healthy(pod: Obj) -> bool:
    """Running and Ready and not going away: what OrderedReady waits for."""
    return bool(pod) and _phase(pod) == "Running" and ready_to_count(pod)


# -- ControllerRevisions (shared with the DaemonSet controller) ---------------------------------


def template_hash(template: Obj) -> str:
    """A short, stable, DNS-safe hash of a pod template (like Kubernetes' revision hashes)."""
    digest = hashlib.sha256(json.dumps(template, sort_keys=True).encode()).digest()
    value = int.from_bytes(digest[:8], "big")
    return spell(value, length=10)


def sync_revisions(
    ctl: Controller, owner: Obj, template: Obj, *, name: str, in_use: set[str]
) -> tuple[str, dict[str, Obj]]:
    """Make sure a ControllerRevision `<owner>-<hash>` holds `template` as the newest revision
    and prune old ones beyond `revisionHistoryLimit` (never those named in `in_use`); returns
    (revision name, {revision name: template})."""
    uid = owner["metadata"]["uid"]
    found = {
        r["metadata"]["name"]: r
        for r in ctl.ctx.index.owned(REVISIONS, uid)
        if controller_uid(r) == uid
    }
    revision = f"{name}-{template_hash(template)}"
    newest = max((int(r.get("revision") or 0) for r in found.values()), default=0)
    existing = found.get(revision)
    try:
        if existing is None:
            found[revision] = ctl.create(
                REVISIONS, _revision_object(owner, revision, template, newest + 1)
            )
        elif int(existing.get("revision") or 0) < newest:  # a rollback: it becomes the newest
            found[revision] = ctl.write(REVISIONS, {**existing, "revision": newest + 1}, existing)
    except ApiError:
        pass  # history is a convenience; pods still carry the hash
    _prune(ctl, owner, found, keep={revision, *in_use})
    templates = {n: _template_of(r) for n, r in found.items()}
    templates[revision] = template
    return revision, templates


def _revision_object(owner: Obj, name: str, template: Obj, number: int) -> Obj:
    labels = dict(((template.get("metadata") or {}).get("labels")) or {})
    labels[REVISION_HASH] = name.rsplit("-", 1)[-1]
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": name,
            "namespace": owner["metadata"]["namespace"],
            "labels": labels,
            "ownerReferences": [controller_ref(owner)],
        },
        "data": {"spec": {"template": {**deep_copy(template), "$patch": "replace"}}},
        "revision": number,
    }


def _template_of(revision: Obj) -> Obj:
    template = ((revision.get("data") or {}).get("spec") or {}).get("template") or {}
    return {k: v for k, v in template.items() if k != "$patch"}


def _prune(ctl: Controller, owner: Obj, found: dict[str, Obj], *, keep: set[str]) -> None:
    limit = int(owner["spec"].get("revisionHistoryLimit", 10))
    old = sorted(
        (r for n, r in found.items() if n not in keep),
        key=lambda r: int(r.get("revision") or 0),
    )
    for revision in old[: max(len(old) - limit, 0)]:
        ctl.delete(REVISIONS, *_ref(revision))
        del found[revision["metadata"]["name"]]


CONTROLLERS: tuple[type[Controller], ...] = (StatefulSetController,)
