"""Deployment rollouts: the revision history kept in ReplicaSets, restart and undo.

A Deployment's history is the ReplicaSets it owns, each annotated with the revision its pod
template had. `revisions` reads it (for `rollout_history` and for undo); `restart` stamps the
template as `kubectl rollout restart` does; `undo` puts back a revision's template as
`kubectl rollout undo` does, guarded by the Deployment's resourceVersion. Both go through
`Writes.change`, so they dry-run first and answer with the diff.
"""

from __future__ import annotations

from datetime import UTC, datetime

from core.connection import Api, Json
from core.errors import InvalidArgument, NotFound
from mcp_servers.kube.writes import CONTENT_TYPES, MANAGER, Target, Writes, only, result, retrying

REVISION = "deployment.kubernetes.io/revision"
CHANGE_CAUSE = "kubernetes.io/change-cause"
RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"
RESTARTABLE = {"Deployment", "StatefulSet", "DaemonSet"}
# Annotations a Deployment keeps through an undo (kubectl skips the same ones).
_UNDO_SKIP = {REVISION, "deployment.kubernetes.io/revision-history",
              "deployment.kubernetes.io/desired-replicas", "deployment.kubernetes.io/max-replicas",
              "kubectl.kubernetes.io/last-applied-configuration"}  # fmt: skip


def revision(obj: Json) -> int:
    """The rollout revision an object (Deployment or ReplicaSet) is annotated with; 0 if none
    or not a number."""
    value = ((obj.get("metadata") or {}).get("annotations") or {}).get(REVISION)
    try:
        return int(str(value or 0))
    except ValueError:
        return 0


def revisions(deployment: Json, replicasets: list[Json]) -> dict[int, Json]:
    """The ReplicaSets of `deployment` among `replicasets`, by the revision each carries."""
    uid = deployment["metadata"]["uid"]
    return {
        revision(rs): rs
        for rs in replicasets
        if revision(rs)
        and any(o.get("uid") == uid for o in rs["metadata"].get("ownerReferences") or [])
    }


def restart(
    writes: Writes,
    kind: str,
    name: str,
    *,
    namespace: str | None = None,
    dry_run: bool = False,
    context: str | None = None,
) -> Json:
    api = writes.api(context)
    target = only(writes.target(api, kind, name, namespace), RESTARTABLE, "restart")
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    body = {"spec": {"template": {"metadata": {"annotations": {RESTARTED_AT: now}}}}}
    return writes.merge(target, api, body, dry_run=dry_run)


def undo(
    writes: Writes,
    name: str,
    *,
    to_revision: int = 0,
    namespace: str | None = None,
    dry_run: bool = False,
    context: str | None = None,
) -> Json:
    """Put a Deployment's pod template back to a revision's (0: the one before the current),
    taken from the ReplicaSet that carries that revision."""
    if to_revision < 0:
        raise InvalidArgument(f"to_revision must be 0 (previous) or a revision, not {to_revision}")
    api = writes.api(context)
    target = only(writes.target(api, "deployments.apps", name, namespace), {"Deployment"}, "undo")
    return retrying(lambda: _undo_once(writes, api, target, to_revision, dry_run=dry_run))


def _undo_once(
    writes: Writes, api: Api, target: Target, to_revision: int, *, dry_run: bool
) -> Json:
    deployment = writes.current(api, target)
    if deployment is None:
        raise NotFound(f"{target.what} was not found")
    if deployment.get("spec", {}).get("paused"):
        raise InvalidArgument(f"{target.what} is paused: resume it first, then undo")
    path = f"/apis/apps/v1/namespaces/{target.namespace}/replicasets"
    listed = api.get(path, what=f"replicasets in namespace {target.namespace}")["items"]
    history = revisions(deployment, listed)
    current = revision(deployment)
    if to_revision == 0:
        older = [r for r in history if r < current] or [r for r in history if r != current]
        if not older:
            raise NotFound(f"no rollout history found for {target.what}: nothing to undo to")
        to_revision = max(older)
    if to_revision not in history:
        raise NotFound(
            f"unable to find revision {to_revision} of {target.what}; "
            f"it has revisions {sorted(history)} (see rollout_history)"
        )
    template = history[to_revision]["spec"]["template"]
    labels = {
        k: v
        for k, v in (template.get("metadata", {}).get("labels") or {}).items()
        if k != "pod-template-hash"
    }
    template = {**template, "metadata": {**template.get("metadata", {}), "labels": labels}}
    if template == deployment["spec"]["template"]:
        return result(target, deployment, deployment, dry_run=dry_run, note=(
            f"skipped rollback (current template already matches revision {to_revision})"
        ))  # fmt: skip
    annotations = {
        k: v
        for k, v in (deployment["metadata"].get("annotations") or {}).items()
        if k in _UNDO_SKIP
    }
    annotations.update(
        (k, v)
        for k, v in (history[to_revision]["metadata"].get("annotations") or {}).items()
        if k not in _UNDO_SKIP
    )
    body = [
        # A resourceVersion in the patch is a precondition: 409 if the object moved on.
        {"op": "replace", "path": "/metadata/resourceVersion",
         "value": deployment["metadata"]["resourceVersion"]},
        {"op": "replace", "path": "/spec/template", "value": template},
        {"op": "replace" if "annotations" in deployment["metadata"] else "add",
         "path": "/metadata/annotations", "value": annotations},
    ]  # fmt: skip
    return writes.change(
        api, target, "PATCH", body=body, content_type=CONTENT_TYPES["json"],
        query={"fieldManager": MANAGER}, dry_run=dry_run, before=deployment,
        note=f"rolled back to revision {to_revision}",
    )  # fmt: skip
