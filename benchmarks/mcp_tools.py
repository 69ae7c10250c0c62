"""The kube MCP server's tool calls on a 5,000-pod sandbox: latency and output size.

The sandbox runs in its own process with 5,000 pods in one namespace (named for a scheduler
nobody runs, so nothing else moves); the kube server is built in this process and called through
the official MCP client over the in-memory transport, one session per call, as a host would call
it. Reported per call: median and p95 latency over the rounds, and the size of the JSON answer
(the point of bounded output: it must not grow with the cluster).

The side-by-side with other MCP servers for Kubernetes is `--suite peers` (benchmarks/mcp_peers.py).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from mcp.shared.memory import create_connected_server_and_client_session
from mcp.types import TextContent

from mcp_servers.kube.server import build
from mcp_servers.kube.settings import KubeSettings

CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("list 5,000 pods (first page)", "list_resources", {"kind": "pods", "namespace": "bench"}),
    ("list pods, all namespaces", "list_resources", {"kind": "pods"}),
    ("get one pod as YAML", "get_resource", {"kind": "pod", "name": "pod-02500",
                                             "namespace": "bench", "output": "yaml"}),
    ("describe one pod", "describe", {"kind": "pod", "name": "pod-02500", "namespace": "bench"}),
    ("diagnose the namespace", "diagnose", {"namespace": "bench"}),
    ("cluster overview", "overview", {}),
]  # fmt: skip


async def _call(server: Any, tool: str, arguments: dict[str, Any]) -> tuple[float, int, bool]:
    began = time.perf_counter()
    async with create_connected_server_and_client_session(server) as session:
        result = await session.call_tool(tool, arguments)
    elapsed = time.perf_counter() - began
    text = "".join(c.text for c in result.content if isinstance(c, TextContent))
    size = len(json.dumps(result.structuredContent)) if result.structuredContent else len(text)
    return elapsed, size, bool(result.isError)


async def run(kubeconfig: Path, results: dict[str, Any], *, rounds: int) -> None:
    server = build(KubeSettings(kubeconfig=kubeconfig))
    for label, tool, arguments in CALLS:
        print(f"  {label} ...", file=sys.stderr, flush=True)
        times, size = [], 0
        for _ in range(rounds):
            elapsed, size, failed = await _call(server, tool, arguments)
            if failed:
                raise SystemExit(f"{tool} failed during the benchmark")
            times.append(elapsed)
        times.sort()
        results[f"mcp_kube: {label}"] = {
            "median_ms": round(statistics.median(times) * 1000, 1),
            "p95_ms": round(times[min(len(times) - 1, int(len(times) * 0.95))] * 1000, 1),
            "answer_bytes": size,
        }
