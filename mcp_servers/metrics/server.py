"""The metrics MCP server: FastMCP tools over `MetricsEngine`, nothing more.

`build(settings)` returns a FastMCP server whose tools all only read (annotations say so: none
changes anything, repeating a call is harmless, and they reach only the configured Prometheus or
cluster, not an open world). Each tool validates nothing itself: the engine does, and its
ToolErrors reach the caller as error results with their message. Engine calls block on HTTP, so
they run in a worker thread, keeping the event loop free for other sessions; the engine's
clients are closed when the server's run ends (its lifespan).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp.server.fastmcp import FastMCP

from mcp_servers.common.bounds import DEFAULT_LIMIT
from mcp_servers.common.tools import READ_ONLY, new_server, off_loop
from mcp_servers.metrics.engine import MetricsEngine
from mcp_servers.metrics.settings import MetricsSettings

INSTRUCTIONS = (
    "Metrics of a Kubernetes cluster: golden signals of a Service, utilization of workloads vs "
    "their requests and limits, node pressure, SLO burn rate, and raw PromQL. Call `sources` "
    "first to see which answers are available (without Prometheus only metrics.k8s.io ones)."
)


def build(settings: MetricsSettings) -> FastMCP:
    engine = MetricsEngine(settings)

    @asynccontextmanager
    async def lifespan(_: FastMCP) -> AsyncIterator[None]:
        try:
            yield
        finally:
            engine.close()

    server = new_server("kubecrew-metrics", INSTRUCTIONS, lifespan)

    @server.tool(annotations=READ_ONLY)
    async def sources() -> dict[str, Any]:
        """Where answers come from (Prometheus or metrics.k8s.io) and which tools can answer."""
        return engine.sources()

    @server.tool(annotations=READ_ONLY)
    async def query(promql: str, time: float | None = None) -> dict[str, Any]:
        """Run a PromQL instant query (at `time`, POSIX seconds; default now).
        At most 200 series are returned; aggregate with sum by/topk for more."""
        return await off_loop(engine.query, promql_text=promql, at=time)

    @server.tool(annotations=READ_ONLY)
    async def query_range(
        promql: str, since: str = "1h", step: str = "1m", end: float | None = None
    ) -> dict[str, Any]:
        """Run a PromQL range query over the last `since` (e.g. '1h') up to `end` (POSIX
        seconds; default now), one point per `step` (e.g. '1m')."""
        return await off_loop(
            engine.query_range, promql_text=promql, since=since, step=step, end=end
        )

    @server.tool(annotations=READ_ONLY)
    async def golden_signals(
        service: str, namespace: str = "default", window: str = "5m"
    ) -> dict[str, Any]:
        """Request rate (per second), error ratio (5xx / all) and p50/p95/p99 latency
        (seconds) of a Service over `window`, with the PromQL behind each number."""
        return await off_loop(
            engine.golden_signals, namespace=namespace, service=service, window=window
        )

    @server.tool(annotations=READ_ONLY)
    async def workload_utilization(
        namespace: str = "default",
        window: str = "1h",
        workload: str | None = None,
        limit: int = DEFAULT_LIMIT,
        offset: int = 0,
    ) -> dict[str, Any]:
        """CPU (cores) and memory (bytes) use per workload over `window` against the sum of
        its containers' requests and limits: the data for right-sizing and cost. cpu_used is
        the mean, cpu_peak the most one pod used at any moment, memory_peak the largest."""
        return await off_loop(
            engine.workload_utilization,
            namespace=namespace,
            window=window,
            workload=workload,
            limit=limit,
            offset=offset,
        )

    @server.tool(annotations=READ_ONLY)
    async def node_pressure(
        window: str = "5m", limit: int = DEFAULT_LIMIT, offset: int = 0
    ) -> dict[str, Any]:
        """Per node: pressure conditions that hold, Ready, and CPU/memory use and requests as
        fractions of allocatable; the most pressed nodes first."""
        return await off_loop(engine.node_pressure, window=window, limit=limit, offset=offset)

    @server.tool(annotations=READ_ONLY)
    async def slo_burn_rate(
        service: str,
        objective: float,
        namespace: str = "default",
        windows: list[str] | None = None,
        threshold: float = 14.4,
    ) -> dict[str, Any]:
        """Error-budget burn rate of a Service for an availability `objective` (e.g. 0.999)
        over each window (default 5m and 1h); `alerting` when all burn above `threshold`."""
        return await off_loop(
            engine.slo_burn_rate,
            namespace=namespace,
            service=service,
            objective=objective,
            windows=windows or ["5m", "1h"],
            threshold=threshold,
        )

    return server
