"""The gitops tools that look at or change the cluster: drift (live vs git) and sync. A sync
that writes (not a dry run) goes through the server's audit trail (`deps.trail`)."""

from __future__ import annotations

from typing import Any

from mcp.server.fastmcp import FastMCP

from mcp_servers.common import arguments
from mcp_servers.common.bounds import page
from mcp_servers.common.tools import off_loop
from mcp_servers.gitops import drift, sync
from mcp_servers.gitops.deps import CLUSTER_READ, Deps, write_hints


def register_drift(mcp: FastMCP, deps: Deps) -> None:
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
        want = sync.desired(repo, ref_or_base(ref))
        docs, notes = want.docs, want.notes
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
            "hint": "two ways to reconcile: sync re-applies git to the cluster (git -> cluster); "
            "adopt_live opens a pull request taking an object's live values into git "
            "(cluster -> git)"
            if drifted
            else "everything matches git",
        }


def register_sync(mcp: FastMCP, deps: Deps) -> None:
    repo, settings, ref_or_base, resources = deps.repo, deps.settings, deps.ref, deps.resources
    trail = deps.trail

    @mcp.tool(name="sync", annotations=write_hints(destructive=True, idempotent=True, cluster=True))
    async def sync_branch(
        ref: str = "",
        dry_run: bool = True,
        prune: bool = False,
        context: str | None = None,
        wait_seconds: float = 0,
    ) -> dict[str, Any]:
        """Apply the manifests of `ref` (default: the base branch), kustomizations rendered,
        to the cluster by server-side apply (git wins over manual edits); `prune` deletes
        objects this repo applied before that it no longer defines. Dry run by default: say
        dry_run=false. If an Argo CD Application or Flux Kustomization deploys this repository,
        nothing is applied here: the answer names it (deferred_to), and wait_seconds > 0
        follows it until it reports the commit synced and healthy."""
        repo_url = settings.repo_url

        def run() -> dict[str, Any]:
            return sync.sync(
                repo,
                resources(context),
                ref=ref_or_base(ref),
                label=settings.label_value,
                dry_run=dry_run,
                prune=prune,
                repo_urls=(repo_url,) if repo_url else (),
                wait_seconds=wait_seconds,
            )

        out = await off_loop(trail.sync, run, ref=ref_or_base(ref), dry_run=dry_run)
        if "deferred_to" in out:
            return out
        chosen = page(out["objects"], limit=100, what="objects")
        return {**out, "objects": chosen.items, "objects_note": chosen.note}
