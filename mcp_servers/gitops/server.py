"""The gitops MCP server: thin FastMCP tools over the repository, PR provider, drift and sync.

Each tool validates its arguments, calls the engine and returns a JSON-able dict; engine
ToolErrors reach the caller as tool errors whose message says what to do next. With
`read_only` the write tools (propose, comment, review, merge, close, revert, sync) are not
registered at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations

from mcp_servers.common import arguments
from mcp_servers.common.bounds import page
from mcp_servers.common.errors import InvalidArgument
from mcp_servers.common.tools import READ_ONLY
from mcp_servers.gitops import drift, paths, sync
from mcp_servers.gitops.providers.base import Verdict
from mcp_servers.gitops.providers.local import LocalProvider
from mcp_servers.gitops.repo import Document, Repository
from mcp_servers.gitops.resources import Resources
from mcp_servers.gitops.settings import GitopsSettings
from mcp_servers.gitops.yamledit import Edit, edit
from mcp_servers.kube.connection import Clusters

CLUSTER_READ = ToolAnnotations(
    readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=True
)


def _write(*, destructive: bool, idempotent: bool, cluster: bool = False) -> ToolAnnotations:
    return ToolAnnotations(
        readOnlyHint=False,
        destructiveHint=destructive,
        idempotentHint=idempotent,
        openWorldHint=cluster,
    )


def _text(value: str, argument: str, limit: int = 20_000) -> str:
    if len(value) > limit or "\x00" in value:
        raise InvalidArgument(f"{argument} is too long or holds a NUL character")
    return value


@dataclass
class _Deps:
    settings: GitopsSettings
    repo: Repository
    provider: LocalProvider
    clusters: Clusters

    @property
    def base(self) -> str:
        return self.settings.base_branch

    def ref(self, ref: str) -> str:
        return ref or self.settings.base_branch

    def resources(self, context: str | None) -> Resources:
        return Resources(self.clusters.api(context), self.settings.default_namespace)


def build(settings: GitopsSettings) -> FastMCP:
    repo = Repository(
        settings.repo, author_name=settings.author_name, author_email=settings.author_email
    )
    deps = _Deps(
        settings,
        repo,
        LocalProvider(repo, settings.state_dir),
        Clusters(settings.kubeconfig, settings.context),
    )
    mcp = FastMCP("kubecrew-gitops")
    _repo_tools(mcp, deps)
    _pr_tools(mcp, deps)
    _cluster_tools(mcp, deps)
    if not settings.read_only:
        _change_tools(mcp, deps)
        _review_tools(mcp, deps)
        _sync_tool(mcp, deps)
    return mcp


def _repo_tools(mcp: FastMCP, deps: _Deps) -> None:
    repo, settings, base = deps.repo, deps.settings, deps.base
    ref_or_base = deps.ref

    @mcp.tool(annotations=READ_ONLY)
    def repo_status() -> dict[str, Any]:
        """The repository: base branch and its last commit, branches, uncommitted files."""
        return repo.status(base)

    @mcp.tool(annotations=READ_ONLY)
    def list_manifests(
        ref: str = "", under: str = "", limit: int = 50, offset: int = 0
    ) -> dict[str, Any]:
        """The Kubernetes objects the YAML files define at `ref` (default: the base branch),
        optionally only under a folder, and the kustomize directories."""
        prefix = paths.repo_path(under, argument="under", allow_root=True)
        rows: list[dict[str, Any]] = []
        for doc in repo.documents(ref_or_base(ref), under=prefix):
            if isinstance(doc, Document):
                rows.append({"file": doc.path, "document": doc.index, **doc.ref})
            else:
                rows.append({"file": doc[0], "error": doc[1]})
        chosen = page(rows, limit=limit, offset=offset, what="objects")
        return {
            "objects": chosen.items,
            "total": chosen.total,
            "note": chosen.note,
            "kustomize_dirs": repo.kustomize_dirs(ref_or_base(ref)),
        }

    @mcp.tool(annotations=READ_ONLY)
    def read_manifest(path: str, ref: str = "") -> dict[str, Any]:
        """The text of one file of the repository at `ref` (default: the base branch)."""
        text = repo.read(ref_or_base(ref), path)
        note = ""
        if len(text) > 40_000:
            text, note = text[:40_000], "file cut at 40,000 characters"
        return {"path": paths.repo_path(path), "ref": ref_or_base(ref), "text": text, "note": note}

    @mcp.tool(annotations=READ_ONLY)
    def find_manifest(kind: str, name: str, namespace: str = "", ref: str = "") -> dict[str, Any]:
        """The file (and document number) defining a live object, by kind, name, namespace."""
        arguments.kind(kind)
        arguments.name(name)
        if namespace:
            arguments.namespace(namespace)
        hits = repo.find(
            ref_or_base(ref),
            kind=kind,
            name=name,
            namespace=namespace,
            default_ns=settings.default_namespace,
        )
        return {
            "found": [{"file": d.path, "document": d.index, **d.ref} for d in hits],
            "note": ""
            if hits
            else f"no manifest defines {kind} {name}; the object is "
            "not managed from this repository",
        }


def _pr_tools(mcp: FastMCP, deps: _Deps) -> None:
    provider = deps.provider

    @mcp.tool(annotations=READ_ONLY)
    def list_prs(
        state: Literal["open", "merged", "closed", "all"] = "open", limit: int = 20, offset: int = 0
    ) -> dict[str, Any]:
        """Pull requests, newest first (title, branches, state, approval)."""
        prs = provider.list_prs(state=state)
        chosen = page(prs, limit=limit, offset=offset, what="pull requests")
        return {
            "prs": [
                {
                    "number": p.number,
                    "title": p.title,
                    "state": p.state,
                    "head": p.head,
                    "base": p.base,
                    "labels": p.labels,
                    "approved": p.approved,
                }
                for p in chosen.items
            ],
            "total": chosen.total,
            "note": chosen.note,
        }

    @mcp.tool(annotations=READ_ONLY)
    def get_pr(number: int) -> dict[str, Any]:
        """One pull request with its diff, reviews, comments and checks."""
        detail = provider.get(number)
        return {**detail.model_dump(), "approved": detail.pr.approved}


def _cluster_tools(mcp: FastMCP, deps: _Deps) -> None:
    repo, settings, ref_or_base, resources = deps.repo, deps.settings, deps.ref, deps.resources

    @mcp.tool(name="drift", annotations=CLUSTER_READ)
    def drift_report(
        namespace: str = "",
        kind: str = "",
        ref: str = "",
        context: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> dict[str, Any]:
        """Live objects against their manifests at `ref`: in-sync, drifted (fields that
        differ, git vs live) or missing. Status and server-set fields are ignored."""
        docs, notes = sync.plain_documents(repo, ref_or_base(ref))
        if namespace:
            arguments.namespace(namespace)
            docs = [
                d for d in docs if (d.ref["namespace"] or settings.default_namespace) == namespace
            ]
        if kind:
            docs = [d for d in docs if d.ref["kind"].lower() == arguments.kind(kind).lower()]
        rows = drift.report(docs, resources(context))
        drifted = [r for r in rows if r["state"] != "in-sync"]
        chosen = page(drifted, limit=limit, offset=offset, what="objects out of sync")
        return {
            "checked": len(rows),
            "out_of_sync": chosen.items,
            "total": chosen.total,
            "note": chosen.note,
            "notes": notes[:20],
            "hint": "sync re-applies git; propose_change adopts a live change"
            if drifted
            else "everything matches git",
        }


def _change_tools(mcp: FastMCP, deps: _Deps) -> None:
    repo, settings, base, provider = deps.repo, deps.settings, deps.base, deps.provider

    @mcp.tool(annotations=_write(destructive=False, idempotent=False))
    def propose_change(
        title: str,
        edits: list[dict[str, Any]] | None = None,
        path: str = "",
        kind: str = "",
        name: str = "",
        document: int = -1,
        content: str | None = None,
        body: str = "",
        labels: list[str] | None = None,
        branch: str = "",
    ) -> dict[str, Any]:
        """Open a pull request against the base branch: either field `edits` to one document
        of the manifest at `path` (each {"path": "spec.replicas", "value": 3} or
        {"path": ..., "delete": true}; pick the document by kind/name or number; comments and
        formatting are kept), or `content`, a whole file written at `path`."""
        _text(title, "title", 200)
        _text(body, "body")
        target = paths.repo_path(path)
        if (content is None) == (not edits):
            raise InvalidArgument("give either edits or content (a whole manifest), not both")
        if content is not None:
            new_text = _text(content, "content", 200_000)
        else:
            new_text = edit(
                repo.read(base, target),
                [_edit(e) for e in edits or []],
                kind=kind,
                name=name,
                index=document,
            )
        branch_name = paths.branch(branch) if branch else _branch_for(title, repo.branches())
        message = f"{title}\n\n{body}".strip() + "\n"
        repo.commit(branch=branch_name, start=base, files={target: new_text}, message=message)
        pr = provider.open(
            title=title,
            body=body,
            labels=labels or [],
            head=branch_name,
            base=base,
            author=settings.author_name,
        )
        return {
            "number": pr.number,
            "branch": branch_name,
            "files": pr.files,
            "next": f"review it (get_pr {pr.number}), approve, then merge_pr",
        }


def _review_tools(mcp: FastMCP, deps: _Deps) -> None:
    provider, settings = deps.provider, deps.settings

    @mcp.tool(annotations=_write(destructive=False, idempotent=False))
    def comment_pr(number: int, body: str, author: str = "kubecrew") -> dict[str, Any]:
        """Add a comment to a pull request."""
        pr = provider.comment(number, author=_text(author, "author", 100), body=_text(body, "body"))
        return {"number": pr.number, "comments": len(pr.comments)}

    @mcp.tool(annotations=_write(destructive=False, idempotent=False))
    def review_pr(
        number: int, verdict: Verdict, body: str = "", author: str = "reviewer"
    ) -> dict[str, Any]:
        """Review a pull request: approve, request_changes or comment."""
        pr = provider.review(
            number, author=_text(author, "author", 100), verdict=verdict, body=_text(body, "body")
        )
        return {"number": pr.number, "approved": pr.approved}

    @mcp.tool(annotations=_write(destructive=True, idempotent=False))
    def merge_pr(number: int) -> dict[str, Any]:
        """Merge an approved pull request with passing checks into its base branch (a merge
        commit). The cluster changes only on sync."""
        pr = provider.merge(number)
        return {
            "number": pr.number,
            "state": pr.state,
            "merge_commit": pr.merge_commit,
            "next": "sync to apply it to the cluster",
        }

    @mcp.tool(annotations=_write(destructive=True, idempotent=True))
    def close_pr(number: int) -> dict[str, Any]:
        """Close a pull request without merging; its branch stays."""
        pr = provider.close(number)
        return {"number": pr.number, "state": pr.state}

    @mcp.tool(annotations=_write(destructive=False, idempotent=False))
    def revert_pr(number: int) -> dict[str, Any]:
        """Open a new pull request that undoes a merged one."""
        pr = provider.revert(number, author=settings.author_name)
        return {"number": pr.number, "branch": pr.head, "reverts": number, "files": pr.files}


def _sync_tool(mcp: FastMCP, deps: _Deps) -> None:
    repo, settings, ref_or_base, resources = deps.repo, deps.settings, deps.ref, deps.resources

    @mcp.tool(name="sync", annotations=_write(destructive=True, idempotent=True, cluster=True))
    def sync_branch(
        ref: str = "", dry_run: bool = True, prune: bool = False, context: str | None = None
    ) -> dict[str, Any]:
        """Apply the manifests of `ref` (default: the base branch) to the cluster by
        server-side apply (git wins over manual edits); `prune` deletes objects this repo
        applied before that it no longer defines. Dry run by default: say dry_run=false."""
        out = sync.sync(
            repo,
            resources(context),
            ref=ref_or_base(ref),
            label=settings.label_value,
            dry_run=dry_run,
            prune=prune,
        )
        chosen = page(out["objects"], limit=100, what="objects")
        return {**out, "objects": chosen.items, "objects_note": chosen.note}


def _edit(raw: dict[str, Any]) -> Edit:
    if not isinstance(raw.get("path"), str) or set(raw) - {"path", "value", "delete"}:
        raise InvalidArgument(
            'each edit is {"path": "spec.replicas", "value": 3} or {"path": ..., "delete": true}'
        )
    return Edit(path=raw["path"], value=raw.get("value"), delete=bool(raw.get("delete")))


def _branch_for(title: str, existing: list[str]) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:40] or "change"
    name, n = f"kubecrew/{slug}", 2
    while name in existing:
        name, n = f"kubecrew/{slug}-{n}", n + 1
    return name
