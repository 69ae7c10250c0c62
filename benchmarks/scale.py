"""`--suite scale`: the sandbox and the kube MCP server at 500 nodes and 50,000 pods.

1. The living cluster at that size (benchmarks/living_cluster.py with 2,000 Deployments of 25
   replicas across 50 namespaces, clock at 10x, every controller and the kubelet running): wall
   time to all Available, the controllers' and kubelets' CPU, the server's peak RSS, and real
   `kubectl get pods -A`; then all 50,000 pods listed over HTTPS in pages of 500, as kubectl
   and client-go list (median of 5).
2. The kube MCP server over stdio on that cluster, as a host runs it: diagnose one namespace
   (1,000 pods), the cluster overview, the first page of pods everywhere, one pod as YAML. Each
   call's first answer (the caches not yet listed) is reported apart; then `ROUNDS` calls after
   its caches are in step: median and p95. And the server process's peak RSS (VmHWM), caches of
   every kind it read included.
3. Listing 50,000 pods inside the API server: the ASGI app called directly, no network
   (`bench_server_side_lists` of benchmarks/__main__.py, at this size).

`--quick`: 100 nodes and 10,000 pods, for trying the suite out.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import statistics
import sys
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from datetime import timedelta
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from benchmarks import living_cluster
from benchmarks.living_cluster import Size
from mcp_servers.common.prelude import CACHE_ENV

FULL = Size(nodes=500, namespaces=50, deployments=2000, replicas=25)
QUICK = Size(nodes=100, namespaces=10, deployments=400, replicas=25)
ROUNDS = 7
PAGE = 500
SETTLE_S = 10.0  # after each call's first answer: its caches list the cluster, then follow
CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("diagnose one namespace", "diagnose", {"namespace": "team-0"}),
    ("cluster overview", "overview", {}),
    ("pods everywhere, first page", "list_resources", {"kind": "pods"}),
    ("one pod as YAML", "get_resource", {"kind": "pod", "namespace": "team-0", "output": "yaml"}),
]


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _peak_rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    found = re.search(r"VmHWM:\s+(\d+) kB", status)
    return int(found.group(1)) / 1024 if found else float("nan")


def _server_pid(marker: str) -> int:
    """The pid of the MCP server process whose command line holds `marker`."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in command and "mcp_servers.kube" in command:
            return int(entry.name)
    raise SystemExit(f"the MCP server with {marker} is not running")


async def _timed(session: ClientSession, tool: str, arguments: dict[str, Any]) -> float:
    began = time.perf_counter()
    answer = await session.call_tool(tool, arguments, read_timeout_seconds=timedelta(seconds=600))
    if answer.isError:
        raise SystemExit(f"{tool} failed: {answer.content}")
    return (time.perf_counter() - began) * 1000


async def mcp_calls(kubeconfig: Path, pod: str, results: dict[str, Any]) -> None:
    command = [sys.executable, "-m", "mcp_servers.kube", "--kubeconfig", str(kubeconfig)]
    params = StdioServerParameters(
        command=command[0],
        args=[*command[1:], "--read-only"],
        env={**os.environ, CACHE_ENV: "off"},
    )
    async with AsyncExitStack() as stack:
        read, write = await stack.enter_async_context(stdio_client(params))
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        pid = _server_pid(str(kubeconfig))
        for label, tool, arguments in CALLS:
            asked = {**arguments, "name": pod} if tool == "get_resource" else arguments
            _log(f"  {label} ...")
            first = await _timed(session, tool, asked)
            await asyncio.sleep(SETTLE_S)
            times = sorted([await _timed(session, tool, asked) for _ in range(ROUNDS)])
            results[f"mcp_kube at scale: {label}"] = {
                "first_ms": round(first, 1),
                "median_ms": round(statistics.median(times), 1),
                "p95_ms": round(times[min(len(times) - 1, int(len(times) * 0.95))], 1),
            }
            _log(json.dumps(results[f"mcp_kube at scale: {label}"]))
        results["mcp_kube at scale: server peak RSS MB"] = round(_peak_rss_mb(pid), 1)


async def https_list_seconds(server: Any, rounds: int = 5) -> tuple[float, int]:
    """Every pod, in pages of `PAGE` as kubectl and client-go list: median seconds, and count."""
    times, count = [], 0
    for _ in range(rounds):
        connection = await server.connect()
        began = time.perf_counter()
        count, token = 0, ""
        while True:
            query = f"?limit={PAGE}" + (f"&continue={token}" if token else "")
            page = json.loads((await connection.request("GET", f"/api/v1/pods{query}")).body)
            count += len(page["items"])
            token = page["metadata"].get("continue") or ""
            if not token:
                break
        times.append(time.perf_counter() - began)
        connection.close()
    return statistics.median(times), count


def size_of(quick: bool) -> Size:
    return QUICK if quick else FULL


async def run(
    start_server: Callable[..., Any], results: dict[str, Any], *, quick: bool, home: Path
) -> None:
    """Parts 1 and 2; part 3 runs outside the event loop (`bench_server_side_lists`)."""
    size = size_of(quick)
    server = start_server(home, nodes=size.nodes, rate=10)
    try:
        await living_cluster.run(server, home, results, size=size, timeout=3600)
        _log(json.dumps({size.key: results[size.key]}))  # kept, whatever happens next
        listing, count = await https_list_seconds(server)
        results[size.key]["list_all_pods_https_pages_median_s"] = round(listing, 2)
        results[size.key]["pods_listed"] = count
        results[size.key]["peak_rss_mb"] = round(server.peak_rss_mb(), 1)
        _log(json.dumps({size.key: results[size.key]}))
        _log(f"the kube MCP server on {size.pods:,} pods ...")
        pod = await _a_pod(server, "team-0")
        await mcp_calls(home / "kubeconfig", pod, results)
    finally:
        server.stop()


async def _a_pod(server: Any, namespace: str) -> str:
    connection = await server.connect()
    response = await connection.request("GET", f"/api/v1/namespaces/{namespace}/pods?limit=1")
    connection.close()
    return str(json.loads(response.body)["items"][0]["metadata"]["name"])
