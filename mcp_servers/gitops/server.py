"""The gitops MCP server: thin FastMCP tools over the repository, PR provider, drift and sync.

Each tool validates its arguments, calls the engine and returns a JSON-able dict; engine
ToolErrors reach the caller as tool errors whose message says what to do next. With
`read_only` the write tools (propose, adopt, comment, review, merge, close, revert, sync) are
not registered at all.

The read tools live here; drift and sync in `tools_cluster`, changes and reviews in
`tools_change`. Two settings are policies: `allow_direct_revert` (default off:
`revert_pr(direct=True)` is refused) and `repo_url` (another URL this repository is known by,
for finding an Argo CD or Flux object that deploys it). No tool takes an author: the server
writes as its configured identity (`author_name`). With `audit`, merges and syncs are recorded
in the policy store's audit log (`audit`).
"""

from __future__ import annotations

from typing import Any, Literal

from mcp.server.fastmcp import FastMCP

from core.connection import Clusters
from mcp_servers.common import arguments
from mcp_servers.common.bounds import page
from mcp_servers.common.tools import READ_ONLY, new_server
from mcp_servers.gitops import paths, sync, tools_change, tools_cluster
from mcp_servers.gitops.audit import AuditTrail
from mcp_servers.gitops.deps import Deps
from mcp_servers.gitops.providers import provider_for
from mcp_servers.gitops.repo import Document, Repository, matching
from mcp_servers.gitops.settings import GitopsSettings


def build(settings: GitopsSettings) -> FastMCP:
    repo = Repository(
        settings.repo, author_name=settings.author_name, author_email=settings.author_email
    )
    deps = Deps(
        settings,
        repo,
        provider_for(settings, repo),
        Clusters(settings.kubeconfig, settings.context),
        AuditTrail.open(settings),
    )
    mcp = new_server("kubecrew-gitops")
    _repo_tools(mcp, deps)
    _history_tool(mcp, deps)
    _pr_tools(mcp, deps)
    tools_cluster.register_drift(mcp, deps)
    if not settings.read_only:
        tools_change.register_changes(mcp, deps)
        tools_change.register_reviews(mcp, deps)
        tools_cluster.register_sync(mcp, deps)
    return mcp


def _repo_tools(mcp: FastMCP, deps: Deps) -> None:
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
        """The file (and document number) defining a live object, by kind, name, namespace;
        for an object a kustomization renders, its directory (rendered_by: kustomize)."""
        arguments.kind(kind)
        arguments.name(name)
        if namespace:
            arguments.namespace(namespace)
        want = sync.desired(repo, ref_or_base(ref))
        hits = matching(
            want.docs,
            kind=kind,
            name=name,
            namespace=namespace,
            default_ns=settings.default_namespace,
        )
        note = ""
        if not hits:
            unread = " (unless a file that could not be read defines it: notes)" * bool(want.notes)
            note = f"no manifest defines {kind} {name}; the object is not managed from this "
            note += f"repository{unread}"
        elif any(d.rendered for d in hits):
            note = "rendered by kustomize: change the files of that directory or its bases"
        return {
            "found": [
                {"file": d.path, "document": d.index, **d.ref}
                | ({"rendered_by": "kustomize"} if d.rendered else {})
                for d in hits
            ],
            "note": note,
            "notes": want.notes[:20],
        }


def _history_tool(mcp: FastMCP, deps: Deps) -> None:
    repo, settings = deps.repo, deps.settings

    @mcp.tool(annotations=READ_ONLY)
    def manifest_history(
        kind: str, name: str, namespace: str = "", limit: int = 5
    ) -> dict[str, Any]:
        """The recent commits on the base branch that changed the manifest of a live object,
        newest first, each with its changed lines: "what changed in git before it broke"."""
        arguments.kind(kind)
        arguments.name(name)
        if namespace:
            arguments.namespace(namespace)
        hits = matching(
            sync.desired(repo, deps.base).docs,
            kind=kind,
            name=name,
            namespace=namespace,
            default_ns=settings.default_namespace,
        )
        files = sorted({d.path for d in hits if not d.rendered})
        if not files:
            return {"commits": [], "files": [], "note": f"no manifest file defines {kind} {name}"}
        limit = max(1, min(limit, 20))
        commits = [
            {**commit, "file": file}
            for file in files
            for commit in repo.history(deps.base, file, limit=limit)
        ]
        commits.sort(key=lambda c: str(c["date"]), reverse=True)
        return {"commits": commits[:limit], "files": files, "note": ""}


def _pr_tools(mcp: FastMCP, deps: Deps) -> None:
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
