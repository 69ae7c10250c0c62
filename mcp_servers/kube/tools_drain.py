"""The `drain_plan` and `drain` tools of the kube server: thin FastMCP wrappers over `drain`.

`drain_plan` only reads, so it is registered always; `drain` cordons and evicts, so a read-only
server does not register it at all. Both run the engine off the event loop. `drain` reports
progress to the client as MCP progress notifications (one per pod gone) when the client asked
for them, since a drain that waits on a budget can take minutes. With a policy gate, `drain`
is registered behind it as the write tools are (`tools_write.gated`).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import anyio.from_thread
from mcp.server.fastmcp import Context, FastMCP
from mcp.types import ToolAnnotations

from core.connection import Clusters, Json
from mcp_servers.common.secret_values import scrubbed
from mcp_servers.common.tools import READ_ONLY, off_loop
from mcp_servers.kube import drain as engine
from mcp_servers.kube import evictions
from mcp_servers.kube.settings import KubeSettings
from mcp_servers.kube.tools_write import gated

if TYPE_CHECKING:
    from mcp_servers.kube.gate import Gate

# drain: evicts pods (destructive); a second call finds the node empty and changes nothing more.
DRAIN = ToolAnnotations(
    readOnlyHint=False, destructiveHint=True, idempotentHint=True, openWorldHint=False
)


def register(
    mcp: FastMCP, clusters: Clusters, settings: KubeSettings, *, gate: Gate | None = None
) -> None:
    @mcp.tool(annotations=READ_ONLY)
    async def drain_plan(
        node: str,
        force: bool = False,
        delete_emptydir_data: bool = False,
        context: str | None = None,
    ) -> Json:
        """What draining `node` would do, changing nothing: each pod's action (evict, skip:
        DaemonSet/mirror pods, refuse: no controller or emptyDir data unless force /
        delete_emptydir_data), the PodDisruptionBudgets involved and which block now, the
        eviction `order` in waves (no wave takes more of a budget than it allows), and the
        expected disruption per workload (replicas unavailable at once during the move)."""

        def run() -> Json:
            api = clusters.api(context)
            return engine.plan(
                api, node, settings, force=force, delete_emptydir_data=delete_emptydir_data
            ).as_dict()

        return await off_loop(run)

    if settings.read_only:
        return

    @gated(mcp, gate)(DRAIN)
    async def drain(
        node: str,
        ctx: Context[Any, Any, Any],
        timeout_seconds: int = 120,
        force: bool = False,
        delete_emptydir_data: bool = False,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
        context: str | None = None,
    ) -> Json:
        """Drain `node` as kubectl drain does: cordon it, then evict its pods through the
        Eviction API, which refuses (429) while a PodDisruptionBudget would be broken; blocked
        pods are retried until timeout_seconds. DaemonSet and mirror pods are skipped; pods
        without a controller or with emptyDir data make the drain refuse (before any change)
        unless force / delete_emptydir_data. dry_run=True returns the plan only. Returns the
        evicted, blocked (with the budget), failed and skipped pods, whether it is `complete`,
        and where the controllers recreated the pods. A blocked drain leaves the node cordoned:
        free the budget (scale up, relax it) and call drain again."""
        api = clusters.api(context)
        drain_plan = await off_loop(
            engine.plan, api, node, settings, force=force, delete_emptydir_data=delete_emptydir_data
        )
        if dry_run:
            return {"dry_run": True, "plan": drain_plan.as_dict()}

        def progress(done: int, total: int, message: str) -> None:
            # Sent before the answer, so past the scrubbing of answers (`secret_values`).
            message = scrubbed(message)
            anyio.from_thread.run(functools.partial(ctx.report_progress, done, total, message))

        return await off_loop(
            evictions.execute,
            api,
            drain_plan,
            timeout_seconds=timeout_seconds,
            grace_period_seconds=grace_period_seconds,
            progress=progress,
        )
