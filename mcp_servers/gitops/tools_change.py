"""The gitops tools that change the repository: propose and adopt changes, review, merge, close
and revert pull requests.

Every PR, review and comment these tools write is the server's own (`settings.author_name`; on
GitHub the token's account): no tool takes an author, so a caller cannot speak in anyone else's
name, and an agent's review is the crew's, which answers no person's approval request. Merges
(`merge_pr`, and a direct `revert_pr`) go through the server's audit trail (`deps.trail`)."""

from __future__ import annotations

import re
from typing import Any

from mcp.server.fastmcp import FastMCP

from core.errors import Conflict, InvalidArgument, PermissionDenied
from mcp_servers.common import arguments
from mcp_servers.gitops import adopt, approval_links, paths, sync
from mcp_servers.gitops.deps import Deps, text_arg, write_hints
from mcp_servers.gitops.providers.base import Verdict
from mcp_servers.gitops.providers.local import LocalProvider
from mcp_servers.gitops.yamledit import Edit, edit


def register_changes(mcp: FastMCP, deps: Deps) -> None:
    repo, settings, base, provider = deps.repo, deps.settings, deps.base, deps.provider

    def open_pr(
        title: str,
        body: str,
        labels: list[str],
        branch: str,
        files: dict[str, str],
        approval: str = "",
    ) -> dict[str, Any]:
        """Commit `files` on a new `branch` from the base and open its pull request; with an
        `approval` request id, the PR body carries its marker (reviews then answer it)."""
        approval_links.unmarked(body)
        pr_body = approval_links.mark(body, approval) if approval else body
        message = f"{title}\n\n{body}".strip() + "\n"
        repo.commit(branch=branch, start=base, files=files, message=message)
        pr = provider.open(
            title=title, body=pr_body, labels=labels, head=branch, base=base,
            author=settings.author_name,
        )  # fmt: skip
        return {
            "number": pr.number,
            "branch": branch,
            "files": pr.files,
            "next": f"review it (get_pr {pr.number}), approve, then merge_pr",
        }

    @mcp.tool(annotations=write_hints(destructive=False, idempotent=False))
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
        approval: str = "",
        new_files: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """Open a pull request against the base branch: either field `edits` to one document
        of the manifest at `path` (each {"path": "spec.replicas", "value": 3} or
        {"path": ..., "delete": true}; pick the document by kind/name or number; comments and
        formatting are kept), or `content`, a whole file written at `path`. `new_files`
        ({path: content}) adds files that do not exist yet to the same PR (a PDB beside its
        Deployment). `approval`: the id of the approval request this change waits for; an
        approver's review of the PR answers it."""
        text_arg(title, "title", 200)
        text_arg(body, "body")
        target = paths.repo_path(path)
        if (content is None) == (not edits):
            raise InvalidArgument("give either edits or content (a whole manifest), not both")
        if content is not None:
            new_text = text_arg(content, "content", 200_000)
        else:
            new_text = edit(
                repo.read(base, target),
                [_edit(e) for e in edits or []],
                kind=kind,
                name=name,
                index=document,
            )
        files = {target: new_text}
        for extra, text in (new_files or {}).items():
            where = paths.repo_path(extra)
            if where in files or repo.exists(base, where):
                raise InvalidArgument(
                    f"new_files: {where} exists already; change it with its own edits or content"
                )
            files[where] = text_arg(text, "new_files content", 200_000)
        branch_name = paths.branch(branch) if branch else _branch_for(title, repo.branches())
        return open_pr(title, body, labels or [], branch_name, files, approval)

    @mcp.tool(annotations=write_hints(destructive=False, idempotent=False, cluster=True))
    def adopt_live(
        kind: str, name: str, namespace: str = "", title: str = "", context: str | None = None
    ) -> dict[str, Any]:
        """Open a pull request that takes a drifted live object's values into git (cluster ->
        git; sync is git -> cluster): each field drift reports is set in the manifest to the
        live value, or removed when the live object dropped it; comments and formatting are
        kept. Not for objects a kustomization renders (edit the overlay with propose_change),
        Secrets, or objects no manifest defines."""
        arguments.kind(kind)
        arguments.name(name)
        if namespace:
            arguments.namespace(namespace)
        doc = adopt.choose(
            sync.desired(repo, base).docs,
            kind=kind,
            name=name,
            namespace=namespace,
            default_ns=settings.default_namespace,
        )
        taken = adopt.adopt(doc, repo.read(base, doc.path), deps.resources(context))
        fields = ", ".join(d.path for d in taken.diffs[:3]) + (", ..." * (len(taken.diffs) > 3))
        default_title = f"Adopt live {doc.ref['kind']} {doc.ref['name']}: {fields}"
        title = text_arg(title, "title", 200) or default_title[:200]
        body = taken.describe()
        answer = open_pr(
            title, body, ["adopt-live"], _branch_for(title, repo.branches()), {doc.path: taken.text}
        )
        answer["adopted"] = [d.as_dict() for d in taken.diffs[:50]]
        answer["next"] += "; sync then finds nothing to change"
        return answer


def register_reviews(mcp: FastMCP, deps: Deps) -> None:
    provider, settings, trail = deps.provider, deps.settings, deps.trail
    me = settings.author_name  # who this server writes as; never a caller's say

    @mcp.tool(annotations=write_hints(destructive=False, idempotent=False))
    def comment_pr(number: int, body: str) -> dict[str, Any]:
        """Add a comment to a pull request, as this server's configured identity."""
        pr = provider.comment(number, author=me, body=text_arg(body, "body"))
        return {"number": pr.number, "comments": len(pr.comments)}

    @mcp.tool(annotations=write_hints(destructive=False, idempotent=False))
    def review_pr(number: int, verdict: Verdict, body: str = "") -> dict[str, Any]:
        """Review a pull request as this server's configured identity: approve,
        request_changes or comment. A person's approval is theirs to give on the forge."""
        pr = provider.review(number, author=me, verdict=verdict, body=text_arg(body, "body"))
        return {"number": pr.number, "approved": pr.approved}

    @mcp.tool(annotations=write_hints(destructive=True, idempotent=False))
    def merge_pr(number: int) -> dict[str, Any]:
        """Merge an approved pull request with passing checks into its base branch (a merge
        commit). The cluster changes only on sync."""
        pr = trail.merge(number, lambda: provider.merge(number))
        return {
            "number": pr.number,
            "state": pr.state,
            "merge_commit": pr.merge_commit,
            "next": "sync to apply it to the cluster",
        }

    @mcp.tool(annotations=write_hints(destructive=True, idempotent=True))
    def close_pr(number: int) -> dict[str, Any]:
        """Close a pull request without merging; its branch stays."""
        pr = provider.close(number)
        return {"number": pr.number, "state": pr.state}

    @mcp.tool(annotations=write_hints(destructive=True, idempotent=False))
    def revert_pr(number: int, direct: bool = False) -> dict[str, Any]:
        """Undo a merged pull request: by default open a new pull request that reverts it.
        direct=True commits the revert straight onto the base branch with no review (for
        emergencies; only where the server allows direct reverts). Either way the cluster
        changes only on sync."""
        if not direct:
            pr = provider.revert(number, author=me)
            return {"number": pr.number, "branch": pr.head, "reverts": number, "files": pr.files}
        return trail.direct_revert(number, lambda: revert_directly(number))

    def revert_directly(number: int) -> dict[str, Any]:
        if not settings.allow_direct_revert:
            raise PermissionDenied(
                "direct reverts are not allowed on this server (allow_direct_revert is off); "
                "call revert_pr without direct to open a revert pull request"
            )
        if not isinstance(provider, LocalProvider):
            raise InvalidArgument("direct revert needs the local provider; open a revert PR")
        merged = provider.get(number).pr
        if merged.state != "merged" or not merged.merge_commit:
            raise Conflict(f"pull request #{number} is {merged.state}; only merged ones revert")
        sha = deps.repo.revert_onto(
            commit=merged.merge_commit,
            branch=merged.base,
            message=f'Revert "{merged.title}"\n\nThis reverts pull request #{number} '
            f"({merged.merge_commit}) directly on {merged.base}, without review.\n",
        )
        provider.comment(
            number, author=me, body=f"Reverted directly on {merged.base} by {sha}; sync applies it."
        )
        return {
            "reverts": number,
            "direct": True,
            "revert_commit": sha,
            "base": merged.base,
            "next": "sync to apply it to the cluster",
        }


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
