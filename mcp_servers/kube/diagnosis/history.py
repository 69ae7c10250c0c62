"""A workload's rollout history as the snapshot shows it, and where a rollback should go.

A Deployment keeps its revisions as ReplicaSets (`deployment.kubernetes.io/revision`), a
StatefulSet or DaemonSet as ControllerRevisions (`revision`, `controller-revision-hash`); both
read as `Revision`s here, so the image playbook finds the last good image of either. Only a
Deployment is rolled back (`rollout_undo`): the others get their template patched.

Kubernetes keeps no record of whether a revision was healthy. What the API does show is enough
to argue for a rollback, and `Rollback.evidence` says which of these held:

- the failing pods all belong to the current revision (their `pod-template-hash` is its
  ReplicaSet's), so the trouble came with it;
- an earlier revision ran different containers (image, command, env, resources: a revision that
  differs only by a restart annotation would roll back into the same failure);
- that revision's ReplicaSet has ready pods right now (a stuck rollout: it is serving), the
  strongest sign it was good.

The target is the newest such earlier revision, skipping any that runs an image known to fail
(an image deleted from the registry fails in every revision that uses it). This module reads the
snapshot only; it decides nothing about confidence (the playbooks weigh the evidence).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from mcp_servers.kube import rollouts
from mcp_servers.kube.diagnosis.findings import ObjectRef
from mcp_servers.kube.diagnosis.snapshot import Json, Snapshot, name_of, namespace_of, pod_ready

HASH = "pod-template-hash"
CONTROLLER_HASH = "controller-revision-hash"


@dataclass(frozen=True)
class Revision:
    number: int
    source: str  # the object holding it: "ReplicaSet web-7d9", "ControllerRevision db-45c"
    hash: str  # the pod-template-hash (controller-revision-hash) its pods carry
    containers: tuple[Json, ...]  # init containers, then containers, as its template has them
    ready: int  # ready pods right now

    def images(self) -> set[str]:
        return {str(c.get("image") or "") for c in self.containers}


@dataclass(frozen=True)
class Rollback:
    to: Revision
    current: Revision
    changes: tuple[str, ...]  # what the rollback puts back: "container main image: new -> old"
    serving: bool  # the target revision has ready pods now
    evidence: tuple[str, ...]


def revisions(snapshot: Snapshot, ref: ObjectRef) -> list[Revision]:
    """The workload's revisions, newest first (empty for kinds that keep none)."""
    if ref.kind == "Deployment":
        found = [_of_replicaset(rs) for rs in _owned(snapshot, "replicasets", ref)]
    elif ref.kind in ("StatefulSet", "DaemonSet"):
        found = [
            _of_controller(snapshot, cr) for cr in _owned(snapshot, "controllerrevisions", ref)
        ]
    else:
        found = []
    return sorted(found, key=lambda r: r.number, reverse=True)


def _owned(snapshot: Snapshot, plural: str, ref: ObjectRef) -> list[Json]:
    return [
        obj
        for obj in snapshot.of(plural)
        if namespace_of(obj) == ref.namespace
        and any(
            o.get("kind") == ref.kind and o.get("name") == ref.name
            for o in (obj.get("metadata") or {}).get("ownerReferences") or []
        )
    ]


def _of_replicaset(rs: Json) -> Revision:
    template = (rs.get("spec") or {}).get("template") or {}
    return Revision(
        number=rollouts.revision(rs),
        source=f"ReplicaSet {name_of(rs)}",
        hash=str(((template.get("metadata") or {}).get("labels") or {}).get(HASH) or ""),
        containers=_containers(template),
        ready=int((rs.get("status") or {}).get("readyReplicas") or 0),
    )


def _of_controller(snapshot: Snapshot, revision: Json) -> Revision:
    """A ControllerRevision: its data is a patch holding the whole pod template."""
    template = (((revision.get("data") or {}).get("spec") or {}).get("template")) or {}
    labels = (revision.get("metadata") or {}).get("labels") or {}
    hash_ = str(labels.get(CONTROLLER_HASH) or name_of(revision).rpartition("-")[2])
    ready = sum(
        1
        for pod in snapshot.pods_in(namespace_of(revision))
        if ((pod.get("metadata") or {}).get("labels") or {}).get(CONTROLLER_HASH) == hash_
        and pod_ready(pod)
    )
    return Revision(
        _number(revision.get("revision")),
        f"ControllerRevision {name_of(revision)}",
        hash_,
        _containers(template),
        ready,
    )


def _containers(template: Json) -> tuple[Json, ...]:
    spec = template.get("spec") or {}
    return (*(spec.get("initContainers") or []), *(spec.get("containers") or []))


def changes(old: Revision, new: Revision) -> tuple[str, ...]:
    """Container fields that differ between two revisions, as rolling back to `old` restores
    them: "container main image: ghcr.io/app:1.1 -> ghcr.io/app:1.0"."""
    before = {str(c.get("name")): c for c in old.containers}
    after = {str(c.get("name")): c for c in new.containers}
    found = []
    for name in sorted(set(before) | set(after)):
        was, now = before.get(name), after.get(name)
        if was is None or now is None:
            found.append(f"container {name}: {'removed' if was is None else 'added back'}")
            continue
        for key in sorted(set(was) | set(now)):
            if was.get(key) != now.get(key):
                found.append(f"container {name} {key}: {now.get(key)} -> {was.get(key)}")
    return tuple(found)


def rollback_target(
    snapshot: Snapshot,
    ref: ObjectRef,
    *,
    failing: Iterable[ObjectRef],
    bad_images: Iterable[str] = (),
) -> Rollback | None:
    """The revision to roll `ref` back to, when the failing pods are all the current revision's
    and an earlier one ran other containers; None when the evidence does not point back."""
    history = revisions(snapshot, ref)
    if ref.kind != "Deployment" or len(history) < 2:
        return None
    deployment = snapshot.by_name("deployments", ref.namespace, ref.name) or {}
    number = rollouts.revision(deployment) or history[0].number
    current = next((r for r in history if r.number == number), history[0])
    hashes = _hashes(snapshot, ref.namespace, failing)
    if not hashes or hashes != {current.hash}:
        return None  # pods of several revisions fail: going back would not help
    avoid = {image for image in bad_images if image}
    for older in (r for r in history if r.number < current.number):
        if older.containers == current.containers or older.images() & avoid:
            continue
        put_back = changes(older, current)
        evidence = [
            f"the failing pods all run revision {current.number} ({current.source})",
            f"revision {older.number} ({older.source}) ran other containers: "
            + "; ".join(put_back[:4]),
        ]
        if older.ready:
            evidence.append(f"revision {older.number} has {older.ready} ready pods right now")
        return Rollback(older, current, put_back, bool(older.ready), tuple(evidence))
    return None


def _hashes(snapshot: Snapshot, namespace: str, pods: Iterable[ObjectRef]) -> set[str]:
    found = set()
    for ref in pods:
        pod = snapshot.by_name("pods", namespace, ref.name) if ref.kind == "Pod" else None
        labels = ((pod or {}).get("metadata") or {}).get("labels") or {}
        if labels.get(HASH) or labels.get(CONTROLLER_HASH):
            found.add(str(labels.get(HASH) or labels[CONTROLLER_HASH]))
    return found


def _number(value: object) -> int:
    try:
        return int(str(value or 0))
    except ValueError:
        return 0
