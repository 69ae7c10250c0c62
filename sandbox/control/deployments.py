"""The Deployment controller: one ReplicaSet per pod template, rolled over as Kubernetes does.

Each pass finds the Deployment's ReplicaSets (by controller owner reference), takes the one whose
template equals the Deployment's (ignoring `pod-template-hash`) as the new one, and then, in the
order kube-controller-manager uses:
- paused, or only `spec.replicas` changed: scale the ReplicaSets (proportionally mid-rollout);
- RollingUpdate: create the new ReplicaSet `<name>-<hash>` if missing, grow it within
  `maxSurge`, shrink old ones within `maxUnavailable` (unhealthy pods first);
- Recreate: scale old ones to 0, wait until their pods are gone, then scale the new one up;
- prune old ReplicaSets beyond `revisionHistoryLimit` once the rollout is complete;
- write status and conditions (`progress.py` computes them) and look again when the progress
  deadline would pass.

Revisions live in annotations: the new ReplicaSet gets `max(old revisions) + 1` (an old one
brought back by `kubectl rollout undo` keeps its previous numbers in `revision-history`).
It drives pods only through ReplicaSets' `spec.replicas`; it never creates or deletes pods.
"""

from __future__ import annotations

from sandbox.control.ownership import controlled_by, controller_ref
from sandbox.control.progress import (
    complete,
    deployment_status,
    has_deadline,
    new_condition,
    progress_status,
    recheck_after,
)
from sandbox.control.rollingupdate import (
    annotation_int,
    available,
    by_creation,
    max_surge,
    max_unavailable,
    new_replicas,
    proportional_sizes,
    rolling,
)
from sandbox.control.rollout import (
    DEPLOYMENTS,
    DESIRED_REPLICAS,
    HASH_LABEL,
    MAX_REPLICAS,
    NOT_COPIED,
    PODS,
    REPLICASETS,
    REVISION,
    REVISION_HISTORY,
    find_condition,
    max_revision,
    replicas_of,
    revision_of,
    set_condition,
    status_count,
    template_hash,
    with_label,
    without_hash,
)
from sandbox.control.runtime import Controller
from sandbox.errors import AlreadyExists
from sandbox.store import Obj


class DeploymentController(Controller):
    name = "deployment-controller"
    primary = DEPLOYMENTS
    watches = (REPLICASETS,)

    def reconcile(self, namespace: str, name: str) -> float | None:
        d = self.get(DEPLOYMENTS, namespace, name)
        if d is None:
            return None
        uid = d["metadata"]["uid"]
        sets = by_creation(
            rs for rs in self.ctx.index.owned(REPLICASETS, uid) if controlled_by(rs, uid)
        )
        if d["metadata"].get("deletionTimestamp"):
            return self._sync_scale_only(d, sets, scale=False)
        d = self._paused_condition(d)
        spec = d.get("spec") or {}
        if spec.get("paused") or self._scaling_event(d, sets):
            return self._sync_scale_only(d, sets, scale=True)
        if rolling(d):
            return self._rolling_update(d, sets)
        return self._recreate(d, sets)

    # -- strategies ------------------------------------------------------------------------------

    def _rolling_update(self, d: Obj, sets: list[Obj]) -> float | None:
        d, new, old = self._new_set(d, sets, create=True)
        if new is None:
            return 0.0  # a hash collision was recorded: try again with the next name
        target = replicas_of(d)
        if replicas_of(new) != target:
            size = min(target, new_replicas(d, [*old, new], new))
            if size != replicas_of(new):
                new = self._scale(d, new, size)
                return self._sync_rollout(d, new, old)
        old, scaled_down = self._scale_down_old(d, new, old)
        if not scaled_down and complete(d, d.get("status") or {}):
            self._prune(d, old)
        return self._sync_rollout(d, new, old)

    def _recreate(self, d: Obj, sets: list[Obj]) -> float | None:
        d, new, old = self._new_set(d, sets, create=False)
        scaled_down = False
        for i, rs in enumerate(old):
            if replicas_of(rs) > 0:
                old[i] = self._scale(d, rs, 0)
                scaled_down = True
        if scaled_down or self._old_pods_running(old):
            return self._sync_rollout(d, new, old)
        if new is None:
            d, new, old = self._new_set(d, sets, create=True)
            if new is None:
                return 0.0
        if replicas_of(new) != replicas_of(d):
            new = self._scale(d, new, replicas_of(d))
        elif complete(d, d.get("status") or {}):
            self._prune(d, old)
        return self._sync_rollout(d, new, old)

    def _sync_scale_only(self, d: Obj, sets: list[Obj], *, scale: bool) -> float | None:
        """Paused, scaled or being deleted: sizes follow `spec.replicas`, no rollout progress."""
        d, new, old = self._new_set(d, sets, create=False)
        if scale:
            new, old = self._proportional_scale(d, new, old)
            if (d.get("spec") or {}).get("paused"):
                self._prune(d, old)
        everything = [*old, *([new] if new else [])]
        status = deployment_status(d, everything, new, stamp=self.ctx.clock.timestamp())
        self._write_status(d, status)
        return None

    # -- the new ReplicaSet and revisions --------------------------------------------------------

    def _new_set(
        self, d: Obj, sets: list[Obj], *, create: bool
    ) -> tuple[Obj, Obj | None, list[Obj]]:
        template = (d.get("spec") or {}).get("template") or {}
        new = next((rs for rs in sets if _template_of(rs) == template), None)
        old = [rs for rs in sets if rs is not new]
        revision = max_revision(old) + 1
        if new is not None:
            new = self._refresh_new(d, new, revision)
            found = f'Found new replica set "{new["metadata"]["name"]}"'
            d = self._record_new(d, new, "FoundNewReplicaSet", found, only_if_missing=True)
            return d, new, old
        if not create:
            return d, None, old
        created = self._create_new(d, template, [*old], revision)
        if created is None:
            return d, None, old
        made = f'Created new replica set "{created["metadata"]["name"]}"'
        d = self._record_new(d, created, "NewReplicaSetCreated", made, only_if_missing=False)
        return d, created, old

    def _create_new(self, d: Obj, template: Obj, sets: list[Obj], revision: int) -> Obj | None:
        status = d.get("status") or {}
        collisions = int(status.get("collisionCount") or 0)
        pod_hash = template_hash(template, collisions)
        meta, spec = d["metadata"], d.get("spec") or {}
        selector = spec.get("selector") or {}
        rs_template = with_label(template, HASH_LABEL, pod_hash)
        annotations = {**_copied_annotations(d), REVISION: str(revision)}
        annotations.update(self._size_annotations(d))
        body: Obj = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": f"{meta['name']}-{pod_hash}",
                "namespace": meta["namespace"],
                "labels": (rs_template.get("metadata") or {}).get("labels") or {},
                "annotations": annotations,
                "ownerReferences": [controller_ref(d)],
            },
            "spec": {
                "replicas": 0,
                "minReadySeconds": int(spec.get("minReadySeconds") or 0),
                "selector": {
                    **selector,
                    "matchLabels": {**(selector.get("matchLabels") or {}), HASH_LABEL: pod_hash},
                },
                "template": rs_template,
            },
        }
        size = new_replicas(d, sets, None)
        body["spec"]["replicas"] = size
        try:
            created = self.create(REPLICASETS, body)
        except AlreadyExists:
            # Another template hashed to the same name: count the collision and rehash.
            self._write_status(d, {**status, "collisionCount": collisions + 1})
            return None
        if size > 0:
            self.event(
                d,
                "ScalingReplicaSet",
                f"Scaled up replica set {body['metadata']['name']} from 0 to {size}",
            )
        return created

    def _refresh_new(self, d: Obj, rs: Obj, revision: int) -> Obj:
        """Annotations and minReadySeconds of the existing new ReplicaSet follow the Deployment;
        one brought back by an undo takes the next revision and remembers its old ones."""
        annotations = dict(rs["metadata"].get("annotations") or {})
        annotations.update(_copied_annotations(d))
        current = revision_of(rs)
        if current < revision:
            annotations[REVISION] = str(revision)
            if current:
                history = annotations.get(REVISION_HISTORY)
                annotations[REVISION_HISTORY] = f"{history},{current}" if history else str(current)
        if DESIRED_REPLICAS not in annotations:
            annotations.update(self._size_annotations(d))
        spec = rs.get("spec") or {}
        min_ready = int((d.get("spec") or {}).get("minReadySeconds") or 0)
        new_spec = {**spec, "minReadySeconds": min_ready}
        if annotations == (rs["metadata"].get("annotations") or {}) and new_spec == spec:
            return rs
        updated = {**rs, "metadata": {**rs["metadata"], "annotations": annotations}}
        return self.write(REPLICASETS, {**updated, "spec": new_spec}, rs)

    def _record_new(
        self, d: Obj, rs: Obj, reason: str, message: str, *, only_if_missing: bool
    ) -> Obj:
        """The Deployment's revision annotation follows its new ReplicaSet; a found or created
        new ReplicaSet starts the Progressing condition."""
        annotations = dict(d["metadata"].get("annotations") or {})
        annotations[REVISION] = str(revision_of(rs))
        status = d.get("status") or {}
        missing = find_condition(status, "Progressing") is None
        if has_deadline(d) and (missing or not only_if_missing):
            cond = new_condition("Progressing", "True", reason, message, self.ctx.clock.timestamp())
            status = set_condition(status, cond)
        if annotations == d["metadata"].get("annotations") and status == d.get("status"):
            return d
        new = {**d, "metadata": {**d["metadata"], "annotations": annotations}, "status": status}
        return self.write(DEPLOYMENTS, new, d)

    # -- scaling ---------------------------------------------------------------------------------

    def _size_annotations(self, d: Obj) -> dict[str, str]:
        desired = replicas_of(d)
        return {DESIRED_REPLICAS: str(desired), MAX_REPLICAS: str(desired + max_surge(d))}

    def _scale(self, d: Obj, rs: Obj, size: int) -> Obj:
        before = replicas_of(rs)
        annotations = {**(rs["metadata"].get("annotations") or {}), **self._size_annotations(d)}
        if before == size and annotations == rs["metadata"].get("annotations"):
            return rs
        new = {
            **rs,
            "metadata": {**rs["metadata"], "annotations": annotations},
            "spec": {**(rs.get("spec") or {}), "replicas": size},
        }
        written = self.write(REPLICASETS, new, rs)
        if before != size:
            way = "up" if size > before else "down"
            message = f"Scaled {way} replica set {rs['metadata']['name']} from {before} to {size}"
            self.event(d, "ScalingReplicaSet", message)
        return written

    def _scaling_event(self, d: Obj, sets: list[Obj]) -> bool:
        desired = replicas_of(d)
        for rs in sets:
            annotated = annotation_int(rs, DESIRED_REPLICAS)
            if replicas_of(rs) > 0 and annotated is not None and annotated != desired:
                return True
        return False

    def _proportional_scale(
        self, d: Obj, new: Obj | None, old: list[Obj]
    ) -> tuple[Obj | None, list[Obj]]:
        everything = [*old, *([new] if new else [])]
        active = [rs for rs in everything if replicas_of(rs) > 0]
        sizes: dict[str, int] = {}
        if len(active) <= 1:
            target = active[0] if active else new or (old[-1] if old else None)
            if target is not None:
                sizes[target["metadata"]["name"]] = replicas_of(d)
        elif new is not None and _saturated(d, new):
            sizes = {rs["metadata"]["name"]: 0 for rs in old}
        elif rolling(d):
            ordered = sorted(active, key=lambda rs: -replicas_of(rs))
            status_replicas = status_count(d, "replicas")
            for rs, size in zip(
                ordered, proportional_sizes(d, ordered, status_replicas), strict=True
            ):
                sizes[rs["metadata"]["name"]] = size
        scaled = [
            self._scale(d, rs, sizes[rs["metadata"]["name"]])
            if rs["metadata"]["name"] in sizes
            else rs
            for rs in everything
        ]
        return (scaled[-1] if new else None), (scaled[:-1] if new else scaled)

    def _scale_down_old(self, d: Obj, new: Obj, old: list[Obj]) -> tuple[list[Obj], bool]:
        """Shrink old ReplicaSets as far as `maxUnavailable` allows: first the pods that are not
        available anyway, then available ones down to `replicas - maxUnavailable`."""
        if sum(replicas_of(rs) for rs in old) == 0:
            return old, False
        min_available = replicas_of(d) - max_unavailable(d)
        new_unavailable = replicas_of(new) - available(new)
        total = sum(replicas_of(rs) for rs in [*old, new])
        budget = total - min_available - new_unavailable
        if budget <= 0:
            return old, False
        old = list(old)
        done = 0
        for i, rs in enumerate(old):
            unhealthy = replicas_of(rs) - available(rs)
            if done >= budget or unhealthy <= 0:
                continue
            cut = min(budget - done, unhealthy)
            old[i] = self._scale(d, rs, replicas_of(rs) - cut)
            done += cut
        spare = sum(available(rs) for rs in [*old, new]) - min_available
        for i, rs in enumerate(old):
            if spare <= 0:
                break
            cut = min(replicas_of(rs), spare)
            if cut > 0:
                old[i] = self._scale(d, rs, replicas_of(rs) - cut)
                spare -= cut
                done += cut
        return old, done > 0

    def _old_pods_running(self, old: list[Obj]) -> bool:
        for rs in old:
            if status_count(rs, "replicas") > 0:
                return True
            for pod in self.ctx.index.owned(PODS, rs["metadata"]["uid"]):
                if (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
                    return True
        return False

    def _prune(self, d: Obj, old: list[Obj]) -> None:
        """Delete the oldest revisions beyond `revisionHistoryLimit` that have no pods left."""
        limit = (d.get("spec") or {}).get("revisionHistoryLimit")
        if limit is None:
            return
        alive = [rs for rs in old if not rs["metadata"].get("deletionTimestamp")]
        extra = len(alive) - int(limit)
        if extra <= 0:
            return
        alive.sort(key=lambda rs: (revision_of(rs), rs["metadata"].get("creationTimestamp", "")))
        for rs in alive[:extra]:
            meta, status = rs["metadata"], rs.get("status") or {}
            observed = int(status.get("observedGeneration") or 0)
            if (
                status.get("replicas")
                or replicas_of(rs)
                or int(meta.get("generation", 0)) > observed
            ):
                continue
            self.delete(REPLICASETS, meta["namespace"], meta["name"])

    # -- status ----------------------------------------------------------------------------------

    def _sync_rollout(self, d: Obj, new: Obj | None, old: list[Obj]) -> float | None:
        everything = [*old, *([new] if new else [])]
        stamp = self.ctx.clock.timestamp()
        status = deployment_status(d, everything, new, stamp=stamp)
        status = progress_status(d, status, new, stamp=stamp, now=self.now())
        self._write_status(d, status)
        return recheck_after(d, status, now=self.now())

    def _write_status(self, d: Obj, status: Obj) -> None:
        self.write_status(DEPLOYMENTS, d, status)

    def _paused_condition(self, d: Obj) -> Obj:
        """Progressing Unknown "DeploymentPaused" while paused, "DeploymentResumed" after."""
        if not has_deadline(d):
            return d
        status = d.get("status") or {}
        cond = find_condition(status, "Progressing")
        reason = cond.get("reason") if cond else None
        if reason == "ProgressDeadlineExceeded":
            return d
        paused = bool((d.get("spec") or {}).get("paused"))
        stamp = self.ctx.clock.timestamp()
        if paused and reason != "DeploymentPaused":
            new = new_condition(
                "Progressing", "Unknown", "DeploymentPaused", "Deployment is paused", stamp
            )
        elif not paused and reason == "DeploymentPaused":
            new = new_condition(
                "Progressing", "Unknown", "DeploymentResumed", "Deployment is resumed", stamp
            )
        else:
            return d
        return self.write_status(DEPLOYMENTS, d, set_condition(status, new))


def _template_of(rs: Obj) -> Obj:
    return without_hash((rs.get("spec") or {}).get("template") or {})


def _copied_annotations(d: Obj) -> dict[str, str]:
    found = d["metadata"].get("annotations") or {}
    return {k: v for k, v in found.items() if k not in NOT_COPIED}


def _saturated(d: Obj, new: Obj) -> bool:
    desired = replicas_of(d)
    return (
        replicas_of(new) == desired
        and annotation_int(new, DESIRED_REPLICAS) == desired
        and status_count(new, "availableReplicas") == desired
    )


CONTROLLERS: tuple[type[Controller], ...] = (DeploymentController,)
