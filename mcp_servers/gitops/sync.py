"""Making the cluster what a branch of the repository says: server-side apply, then prune.

Every object of every plain YAML manifest at the ref is applied with field manager `kubecrew`
and `force=true` (git is the source of truth, so its fields win over a manual edit), labelled
with the repository's `MANAGED_BY_LABEL` so a later prune can find what this repo put there.
A server-side dry run (`dryRun=All`) comes first for every object and decides what would
change; with `dry_run` nothing else happens. Prune deletes labelled objects the ref no longer
defines, only for the kinds the repository manages.

Files under a kustomize directory are not rendered here (yet): they are reported as skipped,
never applied raw, since their patches and overlays would be lost.
"""

from __future__ import annotations

from typing import Any

from mcp_servers.common.errors import NotFound, ToolError
from mcp_servers.gitops.drift import compare
from mcp_servers.gitops.repo import Document, Repository
from mcp_servers.gitops.resources import Resource, Resources
from mcp_servers.gitops.settings import FIELD_MANAGER, MANAGED_BY_LABEL

_FIRST = {"Namespace": 0, "CustomResourceDefinition": 1, "ServiceAccount": 2, "ConfigMap": 3}
PRUNABLE = (
    ("v1", "ConfigMap"),
    ("v1", "Service"),
    ("v1", "ServiceAccount"),
    ("v1", "Secret"),
    ("apps/v1", "Deployment"),
    ("apps/v1", "StatefulSet"),
    ("apps/v1", "DaemonSet"),
    ("batch/v1", "CronJob"),
    ("batch/v1", "Job"),
    ("networking.k8s.io/v1", "Ingress"),
)


def plain_documents(repo: Repository, ref: str) -> tuple[list[Document], list[str]]:
    """The objects sync applies at `ref`, and the notes of what it left out (and why)."""
    kustomized = repo.kustomize_dirs(ref)
    docs: list[Document] = []
    notes: list[str] = []
    for doc in repo.documents(ref):
        if not isinstance(doc, Document):
            notes.append(f"{doc[0]}: {doc[1]}")
        elif any(doc.path.startswith(f"{k}/") or k == "" for k in kustomized):
            notes.append(f"{doc.path}: in a kustomize directory, not rendered; skipped")
        else:
            docs.append(doc)
    return sorted(docs, key=lambda d: (_FIRST.get(d.ref["kind"], 9), d.path, d.index)), notes


def sync(
    repo: Repository, resources: Resources, *, ref: str, label: str, dry_run: bool, prune: bool
) -> dict[str, Any]:
    docs, notes = plain_documents(repo, ref)
    results: list[dict[str, Any]] = []
    wanted: set[tuple[str, str, str, str]] = set()
    for doc in docs:
        entry: dict[str, Any] = {"file": doc.path, "kind": doc.ref["kind"], "name": doc.ref["name"]}
        try:
            resource, namespace, name = resources.locate(doc.obj)
            entry["namespace"] = namespace
            wanted.add((resource.api_version, resource.kind, namespace, name))
            entry.update(_apply_one(resources, resource, doc.obj, namespace, name, label, dry_run))
        except ToolError as exc:
            entry.update(action="error", error=exc.message)
        results.append(entry)
    pruned = _prune(resources, wanted, label=label, dry_run=dry_run) if prune else []
    errors = [r for r in results if r["action"] == "error"]
    return {
        "ref": ref,
        "commit": repo.resolve(ref),
        "dry_run": dry_run,
        "objects": results,
        "pruned": pruned,
        "notes": notes,
        "ok": not errors,
        "summary": _summary(results, pruned, dry_run),
    }


def _apply_one(
    resources: Resources,
    resource: Resource,
    obj: dict[str, Any],
    namespace: str,
    name: str,
    label: str,
    dry_run: bool,
) -> dict[str, Any]:
    meta = dict(obj.get("metadata") or {})
    meta["labels"] = {**(meta.get("labels") or {}), MANAGED_BY_LABEL: label}
    if namespace:
        meta["namespace"] = namespace
    body = {**obj, "metadata": meta}
    path = resource.path(namespace, name)
    what = f"{resource.kind} {name}" + (f" in {namespace}" if namespace else "")
    try:
        live: dict[str, Any] | None = resources.api.get(path, what=what)
    except NotFound:
        live = None
    query = {"fieldManager": FIELD_MANAGER, "force": "true"}
    api = resources.api
    api.request(
        "PATCH",
        path,
        query={**query, "dryRun": "All"},
        body=body,
        content_type="application/apply-patch+yaml",
        what=what,
    )
    diffs = compare(body, live) if live is not None else []
    action = "create" if live is None else ("update" if diffs else "unchanged")
    if not dry_run and action != "unchanged":
        api.request(
            "PATCH",
            path,
            query=query,
            body=body,
            content_type="application/apply-patch+yaml",
            what=what,
        )
    out: dict[str, Any] = {"action": action}
    if diffs:
        out["changes"] = [d.as_dict() for d in diffs[:30]]
    return out


def _prune(
    resources: Resources, wanted: set[tuple[str, str, str, str]], *, label: str, dry_run: bool
) -> list[dict[str, Any]]:
    kinds = {(v, k) for v, k, _ns, _n in wanted} | set(PRUNABLE)
    gone: list[dict[str, Any]] = []
    for api_version, kind in sorted(kinds):
        try:
            resource = resources.lookup(api_version, kind)
            listing = resources.api.get(
                resource.everywhere(),
                labelSelector=f"{MANAGED_BY_LABEL}={label}",
            )
        except ToolError:
            continue
        for item in listing.get("items", []):
            meta = item.get("metadata") or {}
            ns, name = str(meta.get("namespace") or ""), str(meta["name"])
            if (api_version, kind, ns, name) in wanted:
                continue
            entry: dict[str, Any] = {"kind": kind, "namespace": ns, "name": name}
            try:
                resources.api.request(
                    "DELETE",
                    resource.path(ns, name),
                    query={"dryRun": "All" if dry_run else None},
                    what=f"{kind} {name}",
                )
                entry["action"] = "would delete" if dry_run else "deleted"
            except ToolError as exc:
                entry.update(action="error", error=exc.message)
            gone.append(entry)
    return gone


def _summary(results: list[dict[str, Any]], pruned: list[dict[str, Any]], dry_run: bool) -> str:
    counts: dict[str, int] = {}
    for r in results:
        counts[r["action"]] = counts.get(r["action"], 0) + 1
    parts = [f"{n} {a}" for a, n in sorted(counts.items())] + (
        [f"{len(pruned)} pruned"] if pruned else []
    )
    prefix = "dry run, nothing changed: " if dry_run else ""
    return prefix + (", ".join(parts) or "no objects")
