"""`python -m benchmarks --suite heal`: how fast the Dev Team heals, and how fast it looks.

1. Fault injection to validated fix, for the image typo (issue 6's acceptance case), median of
   5 runs. A sandbox at a 10x clock (as the tests run it) with a GitOps repository of the shop
   synced to it; each run commits a typo to main and syncs it (the injection), waits for
   `diagnose` to report ImagePullBackOff (what a watcher would notice), then runs the whole loop
   with its default settings (learn, recommend, policy proposal, PR, review, merge, sync after a
   dry run, validation with a 30 s soak of cluster time). Reported on both clocks: wall seconds,
   and sandbox seconds (`/kubecrew/v1/clock`), which is what a real cluster would take. Each run
   has a fresh agent home, so memory of the previous run does not shorten the next.
2. The kube server's `diagnose` on a namespace of 5,000 pods, median and p95 of 20 calls, one MCP
   session per call over the in-memory transport, as `mcp_tools` measures the other tools.

The sandbox process and its 5,000 pods come from `benchmarks.__main__` (`start` and `fill`), so
both suites measure the same server the same way.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from mcp.shared.memory import create_connected_server_and_client_session

from agents.dev_team.heal import heal
from agents.runtime.loop.validation import LoopSettings
from agents.runtime.toolbox import Servers
from core.policy.settings import SHIPPED, PolicySettings
from mcp_servers.gitops.server import build as build_gitops
from mcp_servers.gitops.settings import GitopsSettings
from mcp_servers.kube.server import build as build_kube
from mcp_servers.kube.settings import KubeSettings

RUNS = 5
DIAGNOSE_ROUNDS = 20
TYPO = "nginx:1.27-alpinee"
WEB = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: nginx:1.27
"""
NAMESPACE = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n"


class Sandbox(Protocol):
    """What `benchmarks.__main__.Server` offers: a sandbox process to connect to and stop."""

    async def connect(self) -> Any: ...

    def stop(self) -> None: ...


Start = Callable[..., Sandbox]  # start(home, nodes=..., rate=...)
Fill = Callable[[Any], Awaitable[None]]  # the started sandbox -> 5,000 pods in "bench"


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _git(repo: Path, *args: str) -> None:
    who = ["-c", "user.name=bench", "-c", "user.email=bench@shop"]
    subprocess.run(["git", "-C", str(repo), *who, *args], check=True, capture_output=True)


async def call_tool(server: Any, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    async with create_connected_server_and_client_session(server) as session:
        result = await session.call_tool(tool, arguments)
    if result.isError:
        raise SystemExit(f"{tool} failed: {result.content}")
    return dict(result.structuredContent or {})


async def sandbox_now(sandbox: Sandbox) -> datetime:
    connection = await sandbox.connect()
    try:
        response = await connection.request("GET", "/kubecrew/v1/clock")
    finally:
        connection.close()
    return datetime.fromisoformat(json.loads(response.body)["now"].replace("Z", "+00:00"))


async def until(what: str, check: Callable[[], Awaitable[bool]], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not await check():
        if time.monotonic() > deadline:
            raise SystemExit(f"benchmark: {what} did not happen within {timeout} s")
        await asyncio.sleep(0.1)


@dataclass(frozen=True)
class World:
    """The heal benchmark's world: a sandbox at a 10x clock running the shop's web, synced from
    a GitOps repository, and the crew's servers on it (kube gated by policy, gitops, policy)."""

    sandbox: Sandbox
    servers: Servers
    repo: Path
    root: Path  # a scratch directory for the runs' agent homes

    async def rolled_out(self) -> None:
        assert self.servers.kube is not None
        kube = build_kube(self.servers.kube)

        async def done() -> bool:
            status = await call_tool(kube, "rollout_status", {"name": "web", "namespace": "shop"})
            return bool(status.get("done"))

        await until("web rolled out", done)


@asynccontextmanager
async def heal_world(start: Start) -> AsyncIterator[World]:
    with tempfile.TemporaryDirectory(prefix="kubecrew-bench-heal-") as tmp:
        root = Path(tmp)
        sandbox = start(root / "sandbox", nodes=3, rate=10)
        try:
            kubeconfig = root / "sandbox" / "kubeconfig"
            repo = root / "shop-gitops"
            repo.mkdir()
            _git(repo, "init", "-q", "-b", "main")
            (repo / "web.yaml").write_text(WEB)
            (repo / "namespace.yaml").write_text(NAMESPACE)
            _git(repo, "add", ".")
            _git(repo, "commit", "-qm", "the shop")
            store = str(root / "policy.sqlite")
            servers = Servers(
                kube=KubeSettings(
                    kubeconfig=kubeconfig, policies=(SHIPPED,), policy_store=store, agent="dev_team"
                ),
                gitops=GitopsSettings(repo=repo, state_dir=root / "prs", kubeconfig=kubeconfig),
                policy=PolicySettings(policies=(SHIPPED,), store=store, agent="dev_team"),
            )
            assert servers.gitops is not None
            await call_tool(build_gitops(servers.gitops), "sync", {"dry_run": False})
            world = World(sandbox, servers, repo, root)
            await world.rolled_out()
            yield world
        finally:
            sandbox.stop()


async def heal_once(world: World, home: Path) -> dict[str, float]:
    """One image typo, from its injection to its validated fix, with a fresh agent home; then
    the fix rolled out, ready for the next run."""
    servers, repo, sandbox = world.servers, world.repo, world.sandbox
    assert servers.gitops is not None and servers.kube is not None
    kube, gitops = build_kube(servers.kube), build_gitops(servers.gitops)
    _git(repo, "reset", "-q", "--hard", "main")  # the last run's merges moved main
    manifest = repo / "web.yaml"
    manifest.write_text(WEB.replace("image: nginx:1.27", f"image: {TYPO}"))
    _git(repo, "commit", "-qam", "web: move to alpine")
    began, clock = time.perf_counter(), await sandbox_now(sandbox)
    await call_tool(gitops, "sync", {"dry_run": False})

    async def noticed() -> bool:
        found = await call_tool(kube, "diagnose", {"namespace": "shop"})
        return any(f["code"] == "ImagePullBackOff" for f in found.get("findings", []))

    await until("ImagePullBackOff", noticed)
    detected = time.perf_counter()
    result = await heal("web", servers=servers, home=home, settings=LoopSettings())
    if result.outcome != "fixed":
        raise SystemExit(f"the loop did not heal web: {result.summary}")
    ended, clock_ended = time.perf_counter(), await sandbox_now(sandbox)
    await world.rolled_out()
    return {
        "wall_s": ended - began,
        "sandbox_s": (clock_ended - clock).total_seconds(),
        "detect_wall_s": detected - began,
        "loop_wall_s": ended - detected,
    }


async def bench_heal(start: Start, results: dict[str, Any], *, runs: int = RUNS) -> None:
    async with heal_world(start) as world:
        measured = []
        for run in range(runs):
            _log(f"  heal run {run + 1}/{runs} ...")
            measured.append(await heal_once(world, world.root / f"home-{run}"))
    results["heal: image typo, injection to validated fix"] = {
        key: round(statistics.median(m[key] for m in measured), 1) for key in measured[0]
    } | {"runs": runs}


async def bench_diagnose(
    start: Start, fill: Fill, results: dict[str, Any], *, rounds: int = DIAGNOSE_ROUNDS
) -> None:
    with tempfile.TemporaryDirectory(prefix="kubecrew-bench-diagnose-") as tmp:
        sandbox = start(Path(tmp) / "sandbox")
        try:
            _log("creating 5,000 pods for diagnose ...")
            await fill(sandbox)
            kube = build_kube(KubeSettings(kubeconfig=Path(tmp) / "sandbox" / "kubeconfig"))
            times = []
            for _ in range(rounds):
                began = time.perf_counter()
                found = await call_tool(kube, "diagnose", {"namespace": "bench"})
                times.append(time.perf_counter() - began)
            times.sort()
        finally:
            sandbox.stop()
    results["heal: diagnose on 5,000 pods"] = {
        "median_ms": round(statistics.median(times) * 1000, 1),
        "p95_ms": round(times[min(len(times) - 1, int(len(times) * 0.95))] * 1000, 1),
        "answer_bytes": len(json.dumps(found)),
        "rounds": rounds,
    }


async def run(start: Start, fill: Fill, results: dict[str, Any], *, quick: bool = False) -> None:
    _log("fault injection to validated fix (image typo) ...")
    await bench_heal(start, results, runs=2 if quick else RUNS)
    await bench_diagnose(start, fill, results, rounds=5 if quick else DIAGNOSE_ROUNDS)
