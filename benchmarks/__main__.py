"""`make bench`: the sandbox API server under load, in a process of its own.

Measures, over real HTTPS on loopback with the server in a separate process:
- creating 10,000 objects (5,000 pods + 5,000 ConfigMaps) from 16 concurrent clients;
- the same writes with a SQLite state file (every write committed before it is acknowledged);
- listing 5,000 pods as JSON and as a Table (what `kubectl get pods` asks for);
- fan-out of watch events to 20 watchers;
- the server's peak RSS (VmHWM);
- the same 5,000-pod lists timed inside the server (the ASGI app called directly);
- the kube MCP server's tool calls on those 5,000 pods (benchmarks/mcp_tools.py): latency and
  answer size;
- the living cluster at size (benchmarks/living_cluster.py): 50 nodes, 200 Deployments and
  5,000 pods reaching Available with every controller and the kubelet running at a 10x clock.

The API benchmarks' pods name a scheduler nobody runs (`spec.schedulerName`), so they stay
Pending and the numbers measure the API server, not the control plane reacting to them.

Client-side round trips include TLS and the client's reading, so they bound the server-side time
from above; the in-server timing is the server's own share. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from benchmarks import (
    changes,
    heal,
    living_cluster,
    mcp_peers,
    mcp_tools,
    scale,
    telemetry,
    upgrade,
)
from benchmarks import exec as exec_suite
from benchmarks.client import Connection
from sandbox.app import App
from sandbox.cluster import Cluster
from sandbox.objects import WriteOptions

TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


@dataclass
class Server:
    process: subprocess.Popen[str]
    url: str
    token: str
    ca: Path

    async def connect(self) -> Connection:
        return await Connection.open(self.url, token=self.token, ca=self.ca)

    def peak_rss_mb(self) -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        match = re.search(r"VmHWM:\s+(\d+) kB", status)
        return int(match.group(1)) / 1024 if match else float("nan")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=15)


def start_server(
    home: Path, *, state: Path | None = None, nodes: int = 3, rate: float = 1.0
) -> Server:
    args = [sys.executable, "-m", "sandbox.server", "--home", str(home), "--nodes", str(nodes)]
    args += ["--rate", str(rate)]
    if state is not None:
        args += ["--state", str(state)]
    process = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    line = process.stdout.readline()
    match = re.search(r"ready at (\S+);", line)
    if not match:
        raise SystemExit(f"the sandbox did not start: {line!r}")
    config = yaml.safe_load((home / "kubeconfig").read_text())
    return Server(
        process,
        match.group(1).rstrip(";"),
        config["users"][0]["user"]["token"],
        home / "tls" / "ca.crt",
    )


def pod(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "bench", "shard": name[-1]}},
        "spec": {
            "schedulerName": "benchmark-none",
            "containers": [
                {
                    "name": "app",
                    "image": "nginx:1.27",
                    "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
                    "ports": [{"containerPort": 80}],
                }
            ],
        },
    }


def configmap(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name},
        "data": {"key": "value", "name": name},
    }


async def create_many(
    server: Server,
    namespace: str,
    bodies: list[tuple[str, dict[str, Any]]],
    *,
    concurrency: int = 8,
) -> list[float]:
    """POST every body, `concurrency` at a time; returns each request's latency in seconds."""
    latencies: list[float] = []
    queue: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue()
    for plural, body in bodies:
        queue.put_nowait((f"/api/v1/namespaces/{namespace}/{plural}", json.dumps(body).encode()))

    async def worker() -> None:
        connection = await server.connect()
        try:
            while not queue.empty():
                path, payload = queue.get_nowait()
                began = time.perf_counter()
                response = await connection.request("POST", path, payload)
                latencies.append(time.perf_counter() - began)
                if response.status != 201:
                    raise SystemExit(f"create failed: {response.status} {response.body[:200]!r}")
        finally:
            connection.close()

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return latencies


async def make_namespace(server: Server, name: str) -> None:
    connection = await server.connect()
    response = await connection.request(
        "POST", "/api/v1/namespaces", json.dumps({"metadata": {"name": name}}).encode()
    )
    connection.close()
    if response.status != 201:
        raise SystemExit(f"namespace {name}: {response.status} {response.body[:200]!r}")


async def bench_writes(server: Server, label: str, results: dict[str, Any]) -> None:
    await make_namespace(server, "bench")
    bodies = [("pods", pod(f"pod-{i:05d}")) for i in range(5000)]
    bodies += [("configmaps", configmap(f"cm-{i:05d}")) for i in range(5000)]
    began = time.perf_counter()
    latencies = await create_many(server, "bench", bodies)
    elapsed = time.perf_counter() - began
    results[label] = {
        "objects": len(bodies),
        "seconds": round(elapsed, 2),
        "writes_per_second": round(len(bodies) / elapsed),
        "median_ms": round(statistics.median(latencies) * 1000, 2),
        "p99_ms": round(statistics.quantiles(latencies, n=100)[98] * 1000, 2),
    }


async def bench_lists(server: Server, results: dict[str, Any], *, rounds: int = 15) -> None:
    connection = await server.connect()
    for label, accept in (
        ("list_5000_pods_json", "application/json"),
        ("list_5000_pods_table", TABLE_ACCEPT),
    ):
        times, size = [], 0
        for _ in range(rounds):
            began = time.perf_counter()
            response = await connection.request(
                "GET", "/api/v1/namespaces/bench/pods", accept=accept
            )
            times.append(time.perf_counter() - began)
            size = len(response.body)
        body = json.loads(response.body)
        count = len(body.get("items", body.get("rows", [])))
        if count != 5000:
            raise SystemExit(f"{label}: got {count} items, expected 5000")
        results[label] = {
            "median_ms": round(statistics.median(times) * 1000, 1),
            "min_ms": round(min(times) * 1000, 1),
            "bytes": size,
        }
    connection.close()


async def bench_watch_fanout(
    server: Server, results: dict[str, Any], *, watchers: int = 20, events: int = 500
) -> None:
    await make_namespace(server, "bench-watch")
    received: list[dict[str, float]] = [{} for _ in range(watchers)]
    ready = asyncio.Event()
    connected = 0

    async def watch(index: int) -> None:
        nonlocal connected
        connection = await server.connect()
        path = "/api/v1/namespaces/bench-watch/configmaps?watch=true&timeoutSeconds=120"
        stream = connection.lines(path)
        connected += 1
        if connected == watchers:
            ready.set()
        async for line in stream:
            name = json.loads(line)["object"]["metadata"]["name"]
            received[index][name] = time.perf_counter()
            if len(received[index]) == events:
                break
        connection.close()

    sent: dict[str, float] = {}
    tasks = [asyncio.create_task(watch(i)) for i in range(watchers)]
    await asyncio.wait_for(ready.wait(), 30)
    await asyncio.sleep(0.5)  # every watch request has reached the server
    writer = await server.connect()
    began = time.perf_counter()
    for i in range(events):
        name = f"w-{i:04d}"
        sent[name] = time.perf_counter()
        response = await writer.request(
            "POST",
            "/api/v1/namespaces/bench-watch/configmaps",
            json.dumps(configmap(name)).encode(),
        )
        if response.status != 201:
            raise SystemExit(f"create failed: {response.status}")
    await asyncio.wait_for(asyncio.gather(*tasks), 120)
    elapsed = time.perf_counter() - began
    writer.close()
    delays = [got[name] - sent[name] for got in received for name in got]
    results["watch_fanout_20"] = {
        "events_delivered": len(delays),
        "delivered_per_second": round(len(delays) / elapsed),
        "median_delivery_ms": round(statistics.median(delays) * 1000, 2),
        "p99_delivery_ms": round(statistics.quantiles(delays, n=100)[98] * 1000, 2),
    }


def bench_server_side_lists(results: dict[str, Any], *, rounds: int, count: int = 5000) -> None:
    """The list requests timed inside the server: the ASGI app called directly, no network."""
    cluster = Cluster(admin_token="bench", signing_key=b"b" * 32, nodes=3)
    app = App(cluster)
    pods = cluster.registry.lookup("", "v1", "pods")
    namespaces = cluster.registry.lookup("", "v1", "namespaces")
    assert pods is not None and namespaces is not None
    options = WriteOptions(field_manager="bench")
    cluster.objects.create(namespaces, {"metadata": {"name": "bench"}}, namespace="", opts=options)
    for i in range(count):
        cluster.objects.create(pods, pod(f"pod-{i:05d}"), namespace="bench", opts=options)

    async def list_once(accept: str) -> float:
        scope = {
            "type": "http",
            "method": "GET",
            "path": "/api/v1/namespaces/bench/pods",
            "query_string": b"",
            "headers": [(b"authorization", b"Bearer bench"), (b"accept", accept.encode())],
        }
        sent: list[Any] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: Any) -> None:
            sent.append(message)

        began = time.perf_counter()
        await app(scope, receive, send)
        elapsed = time.perf_counter() - began
        if sent[0]["status"] != 200:
            raise SystemExit(f"server-side list failed: {sent[0]['status']}")
        return elapsed

    for label, accept in (
        (f"server_side_list_{count}_pods_json", "application/json"),
        (f"server_side_list_{count}_pods_table", TABLE_ACCEPT),
    ):
        times = [asyncio.run(list_once(accept)) for _ in range(rounds)]
        results[label] = {
            "median_ms": round(statistics.median(times) * 1000, 1),
            "min_ms": round(min(times) * 1000, 1),
        }
    cluster.close()


async def run_living_cluster(results: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory(prefix="kubecrew-bench-") as tmp:
        home = Path(tmp) / "living"
        server = start_server(home, nodes=50, rate=10)
        try:
            await living_cluster.run(server, home, results)
        finally:
            server.stop()


async def fill_bench(server: Server) -> None:
    await make_namespace(server, "bench")
    await create_many(server, "bench", [("pods", pod(f"pod-{i:05d}")) for i in range(5000)])


async def run_peers(results: dict[str, Any]) -> None:
    """Our kube MCP server beside two peers from PyPI (installs them in a throwaway venv)."""
    with tempfile.TemporaryDirectory(prefix="kubecrew-bench-") as tmp:
        home = Path(tmp) / "peers"
        server = start_server(home)
        try:
            print("creating 5,000 pods for the MCP peers ...", file=sys.stderr, flush=True)
            await make_namespace(server, "bench")
            await create_many(server, "bench", [("pods", pod(f"pod-{i:05d}")) for i in range(5000)])
            await mcp_peers.run(home / "kubeconfig", Path(tmp), results)
        finally:
            server.stop()


async def run(quick: bool, suite: str) -> dict[str, Any]:
    results: dict[str, Any] = {}
    if suite == "peers":
        await run_peers(results)
        return results
    if suite == "heal":  # benchmarks/heal.py: fault to validated fix; diagnose on 5,000 pods
        await heal.run(start_server, fill_bench, results, quick=quick)
        return results
    if suite == "telemetry":  # benchmarks/telemetry.py: the heal with tracing off and on
        await telemetry.run(start_server, results, quick=quick)
        return results
    if suite == "changes":  # benchmarks/changes.py: request to validated change
        await changes.run(start_server, results, quick=quick)
        return results
    if suite == "upgrade":  # benchmarks/upgrade.py: 50 nodes, 3 pools, one minor up at 10x
        await upgrade.run(start_server, results, quick=quick)
        return results
    if suite == "scale":  # benchmarks/scale.py: 500 nodes, 50,000 pods; the kube server on them
        with tempfile.TemporaryDirectory(prefix="kubecrew-bench-") as tmp:
            await scale.run(start_server, results, quick=quick, home=Path(tmp) / "scale")
        return results
    if suite == "exec":  # benchmarks/exec.py: an exec round trip beside a get, on 5,000 pods
        await exec_suite.run(start_server, fill_bench, results, quick=quick)
        return results
    if suite in ("cluster", "all"):
        await run_living_cluster(results)
    if suite == "cluster":
        return results
    with tempfile.TemporaryDirectory(prefix="kubecrew-bench-") as tmp:
        server = start_server(Path(tmp) / "memory")
        try:
            print("creating 10,000 objects (in memory) ...", file=sys.stderr, flush=True)
            await bench_writes(server, "create_10000_in_memory", results)
            print("listing 5,000 pods ...", file=sys.stderr, flush=True)
            await bench_lists(server, results, rounds=5 if quick else 15)
            print("kube MCP tool calls on 5,000 pods ...", file=sys.stderr, flush=True)
            await mcp_tools.run(
                Path(tmp) / "memory" / "kubeconfig", results, rounds=5 if quick else 20
            )
            print("watch fan-out to 20 watchers ...", file=sys.stderr, flush=True)
            await bench_watch_fanout(server, results, events=100 if quick else 500)
            results["peak_rss_mb"] = round(server.peak_rss_mb(), 1)
        finally:
            server.stop()
        persistent = start_server(Path(tmp) / "durable", state=Path(tmp) / "state.sqlite")
        try:
            print("creating 10,000 objects (SQLite state) ...", file=sys.stderr, flush=True)
            await bench_writes(persistent, "create_10000_sqlite", results)
        finally:
            persistent.stop()
    return results


def render(results: dict[str, Any]) -> str:
    rows = ["| benchmark | result |", "|---|---|"]
    for name, value in results.items():
        text = (
            ", ".join(f"{k} {v}" for k, v in value.items())
            if isinstance(value, dict)
            else str(value)
        )
        rows.append(f"| {name} | {text} |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer rounds, for a smoke run")
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument(
        "--suite",
        choices=(
            "all",
            "api",
            "cluster",
            "peers",
            "heal",
            "telemetry",
            "changes",
            "exec",
            "upgrade",
            "scale",
        ),
        default="all",
        help="api: the API server alone; cluster: the living cluster at size; all: both; "
        "peers: the kube MCP server beside two peers from PyPI (installs them; not in all); "
        "heal: fault injection to validated fix, and diagnose on 5,000 pods (not in all); "
        "telemetry: that heal with tracing off and on, and a tool call's metrics and span "
        "(not in all); "
        "changes: request to validated change, for each kind of everyday change (not in all); "
        "exec: an exec round trip beside a get pod, kubectl and the Python client (not in all); "
        "upgrade: the Cluster Operator upgrades 50 nodes in 3 pools at a 10x clock (not in all); "
        "scale: 500 nodes and 50,000 pods reaching Available, and the kube MCP server's "
        "diagnose, overview, list and get on them (not in all; --quick: 10,000 pods)",
    )
    args = parser.parse_args()
    results = asyncio.run(run(args.quick, args.suite))
    if args.suite in ("all", "api"):
        print("listing 5,000 pods inside the server ...", file=sys.stderr, flush=True)
        bench_server_side_lists(results, rounds=5 if args.quick else 15)
    if args.suite == "scale":
        count = scale.size_of(args.quick).pods
        print(f"listing {count:,} pods inside the server ...", file=sys.stderr, flush=True)
        bench_server_side_lists(results, rounds=5, count=count)
    if args.suite != "peers":  # the peers suite prints its own table
        print(render(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    print(f"\nmachine: {os.cpu_count()} cores; python {sys.version.split()[0]}", flush=True)


if __name__ == "__main__":
    main()
