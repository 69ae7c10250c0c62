"""Making the cluster what a branch of the repository says: server-side apply, then prune.

The desired state at a ref (`desired`) is every object of every plain YAML manifest outside
kustomize directories, plus what each top-level kustomization renders (`kustomize`; files inside
a kustomize directory are never applied raw, since their patches and overlays would be lost).
Each object is applied with field manager `kubecrew` and `force=true` (git is the source of
truth, so its fields win over a manual edit), labelled with the repository's `MANAGED_BY_LABEL`
so a later prune can find what this repo put there. A server-side dry run (`dryRun=All`) comes
first for every object and decides what would change; with `dry_run` nothing else happens.
Prune deletes labelled objects the ref no longer defines, only for the kinds the repository
manages, and only when every file parsed and every kustomization rendered: an object missing
because its overlay failed to render is not an object git deleted.

Before any of that, sync looks for an Argo CD Application or Flux Kustomization that deploys this
repository (`deferral`); if one does, applying is its job, and sync only reports (and, asked to,
follows) it, so two controllers never fight over the same objects.

What sync reports of a Secret carries none of its values: `drift.compare` hides them in the
changes, the objects kustomize renders are `touch`ed like the files git holds, and the API is
`watched` (`Resources`), so the tool call scrubs them from any error the cluster words.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.errors import NotFound, ToolError
from mcp_servers.common.secret_values import touch
from mcp_servers.gitops import deferral, kustomize
from mcp_servers.gitops.drift import FieldDiff, compare
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


@dataclass(frozen=True)
class Desired:
    docs: list[Document]  # in apply order: namespaces and CRDs first
    notes: list[str]  # files that did not parse, kustomizations that did not render, duplicates
    complete: bool  # every file parsed and every kustomization rendered (prune may run)


def desired(repo: Repository, ref: str) -> Desired:
    """The objects sync applies at `ref`, and the notes of what it could not read (and why)."""
    kdirs = repo.kustomize_dirs(ref)
    docs: list[Document] = []
    notes: list[str] = []
    for doc in repo.documents(ref):
        path = doc.path if isinstance(doc, Document) else doc[0]
        if any(k == "" or path.startswith(f"{k}/") for k in kdirs):
            continue  # kustomize reads it (or reports it) when it renders the directory
        if isinstance(doc, Document):
            docs.append(doc)
        else:
            notes.append(f"{doc[0]}: {doc[1]}")
    rendered, failures = kustomize.render(repo, ref, kdirs)
    for doc in rendered:
        touch(doc.obj)  # a secretGenerator's Secret: its values come from files read here
    notes += failures
    complete = not notes
    ordered = sorted(docs + rendered, key=lambda d: (_FIRST.get(d.ref["kind"], 9), d.path, d.index))
    return Desired(_unique(ordered, notes), notes, complete)


def _unique(docs: list[Document], notes: list[str]) -> list[Document]:
    """The first definition of each object; a second one (two overlays rendering the same
    object) is left out with a note, since applying both would flip it on every sync."""
    seen: dict[tuple[str, ...], str] = {}
    kept: list[Document] = []
    for doc in docs:
        r = doc.ref
        key = (r["apiVersion"].split("/")[0], r["kind"], r["namespace"], r["name"])
        if key in seen:
            notes.append(
                f"{doc.path}: {r['kind']} {r['name']} is defined already by {seen[key]}; "
                "left out (render each object from one place)"
            )
            continue
        seen[key] = doc.path
        kept.append(doc)
    return kept


def sync(
    repo: Repository,
    resources: Resources,
    *,
    ref: str,
    label: str,
    dry_run: bool,
    prune: bool,
    repo_urls: tuple[str, ...] = (),
    wait_seconds: float = 0,
) -> dict[str, Any]:
    """Apply `ref` (or defer to the Argo CD / Flux object deploying the repository, known by
    its locations and `repo_urls`, following it for up to `wait_seconds`)."""
    deferral.check_wait(wait_seconds)
    commit = repo.resolve(ref)
    controller = deferral.find(resources.api, [*repo.locations(), *repo_urls])
    if controller is not None:
        return deferral.follow(
            resources.api,
            controller,
            ref=ref,
            commit=commit,
            wait_seconds=wait_seconds,
            refresh=not dry_run,
        )
    want = desired(repo, ref)
    results: list[dict[str, Any]] = []
    wanted: set[tuple[str, str, str, str]] = set()
    for doc in want.docs:
        entry: dict[str, Any] = {"file": doc.path, "kind": doc.ref["kind"], "name": doc.ref["name"]}
        if doc.rendered:
            entry["rendered_by"] = "kustomize"
        try:
            resource, namespace, name = resources.locate(doc.obj)
            entry["namespace"] = namespace
            wanted.add((resource.api_version, resource.kind, namespace, name))
            entry.update(_apply_one(resources, resource, doc.obj, namespace, name, label, dry_run))
        except ToolError as exc:
            entry.update(action="error", error=exc.message)
        results.append(entry)
    notes = list(want.notes)
    pruned: list[dict[str, Any]] = []
    if prune and not want.complete:
        notes.append("prune skipped: fix the notes above first, so nothing is deleted by mistake")
    elif prune:
        pruned = _prune(resources, wanted, label=label, dry_run=dry_run)
    errors = [r for r in results if r["action"] == "error"]
    return {
        "ref": ref,
        "commit": commit,
        "dry_run": dry_run,
        "objects": results,
        "pruned": pruned,
        "notes": notes,
        "ok": not errors and want.complete,
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
    preview = api.request(
        "PATCH",
        path,
        query={**query, "dryRun": "All"},
        body=body,
        content_type="application/apply-patch+yaml",
        what=what,
    )
    diffs = compare(body, live) if live is not None else []
    if live is not None and not diffs:  # only removals: git dropped a field the sync had set
        diffs = [d for d in compare(_content(live), preview) if d.live is None]
        diffs = [FieldDiff(d.path, None, d.git) for d in diffs]
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


def _content(obj: dict[str, Any]) -> dict[str, Any]:
    """The object without what the server keeps for itself (metadata, status): what an apply
    may change."""
    return {k: v for k, v in obj.items() if k not in ("metadata", "status")}


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
