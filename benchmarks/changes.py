"""`python -m benchmarks --suite changes`: request to validated change, over everyday requests.

A sandbox at a 10x clock (as the tests run it) in a process of its own, with `web` and `api`
Deployments in `staging` and the shipped policies. Each request below is one `kubecrew ask`
as a person types it, to the agent whose change it is, through the whole way every change
goes: the grammar, the object resolved and the change made precise, the policy store's
proposal, the server-side dry run, the gated write, the audit record, and the validation that
fits the change (a rollout soaked 30 s of cluster time, replicas available, endpoints ready,
the object read back, the node read back). Timed from the request to the validated answer, on
both clocks: wall seconds, and sandbox seconds (`/kubecrew/v1/clock`), which is what a real
cluster would take. A request that does not end "done" stops the benchmark with its answer.

Reports the median and p95 over all requests, and each kind's time; `--quick` runs each request
once, the full run twice (each round on a fresh sandbox, so each change starts from the same
state).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from agents.runtime import registry
from agents.runtime.brain import Deterministic
from agents.runtime.contract import Outcome
from agents.runtime.toolbox import Servers
from benchmarks.heal import Sandbox, Start, call_tool, sandbox_now, until
from core.policy.settings import SHIPPED, PolicySettings
from mcp_servers.kube.server import build as build_kube
from mcp_servers.kube.settings import KubeSettings

# (kind, agent, request): one of each kind people ask, in order on one sandbox.
REQUESTS: tuple[tuple[str, str, str], ...] = (
    ("scale", "dev_team", "scale web to 3"),
    ("image", "dev_team", "set the image of web to nginx:1.26"),
    ("restart", "dev_team", "restart web"),
    ("env", "dev_team", "set LOG_LEVEL=debug on web"),
    ("resources", "dev_team", "give web half a CPU"),
    ("labels", "dev_team", "label web tier=frontend"),
    ("probe", "dev_team", "add a readiness probe to web on / port 80"),
    ("spread", "dev_team", "spread web across zones"),
    ("expose", "dev_team", "expose web on port 80"),
    ("pdb", "dev_team", "add a pdb to web with min available 1"),
    ("autoscale", "dev_team", "autoscale web between 3 and 6 at 70% cpu"),
    ("network-policy", "dev_team", "only web may reach api in staging"),
    ("configmap", "dev_team", "create a configmap app-config with MODE=fast in staging"),
    ("new-workload", "dev_team", "run redis:7 as cache with 2 replicas in staging"),
    ("cronjob", "dev_team", "a job that runs `echo hi` every night at 2 in staging"),
    ("namespace", "platform", "create namespace team-a with a quota of 10 pods"),
    ("access", "platform", "let carol read logs in staging"),
    ("cordon", "cluster_operator", "cordon node-3"),
    ("taint", "cluster_operator", "taint node-2 dedicated=gpu:NoSchedule"),
)
WORKLOADS = """\
apiVersion: v1
kind: Namespace
metadata: {name: staging}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: staging}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - {name: web, image: nginx:1.27, ports: [{containerPort: 80}],
         resources: {requests: {cpu: 100m, memory: 32Mi}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: staging}
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - {name: api, image: nginx:1.27, resources: {requests: {cpu: 100m, memory: 32Mi}}}
"""


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _servers(kubeconfig: Path, store: str, agent: str) -> Servers:
    return Servers(
        kube=KubeSettings(
            kubeconfig=kubeconfig, policies=(SHIPPED,), policy_store=store, agent=agent
        ),
        policy=PolicySettings(policies=(SHIPPED,), store=store, agent=agent),
    )


async def _ask(servers: Servers, agent: str, text: str, home: Path) -> Outcome:
    found = registry.find(agent)
    if found is None:
        raise SystemExit(f"benchmark: the {agent} agent is not installed")
    async with found.open(servers, Deterministic(), home=home) as talk:
        return await talk.ask(text)


async def _world(sandbox: Sandbox, kubeconfig: Path, store: str) -> None:
    """The two Deployments, applied with the kube server's own apply, and rolled out."""
    servers = _servers(kubeconfig, store, "dev_team")
    assert servers.kube is not None
    kube = build_kube(servers.kube)
    await call_tool(kube, "apply", {"manifest": WORKLOADS})
    for name in ("web", "api"):

        async def done(name: str = name) -> bool:
            status = await call_tool(kube, "rollout_status", {"name": name, "namespace": "staging"})
            return bool(status.get("done"))

        await until(f"{name} rolled out", done)


async def bench_round(start: Start, root: Path) -> list[dict[str, Any]]:
    sandbox = start(root / "sandbox", nodes=3, rate=10)
    measured = []
    try:
        kubeconfig, store = root / "sandbox" / "kubeconfig", str(root / "policy.sqlite")
        await _world(sandbox, kubeconfig, store)
        for kind, agent, text in REQUESTS:
            servers = _servers(kubeconfig, store, agent)
            began, clock = time.perf_counter(), await sandbox_now(sandbox)
            outcome = await _ask(servers, agent, text, root / "homes" / agent)
            if outcome.data.get("outcome") != "done":
                raise SystemExit(f"benchmark: {text!r} was not done: {outcome.answer}")
            ended, clock_ended = time.perf_counter(), await sandbox_now(sandbox)
            measured.append({"kind": kind, "wall_s": ended - began,
                             "sandbox_s": (clock_ended - clock).total_seconds()})  # fmt: skip
            _log(f"  {kind}: {ended - began:.1f} s wall")
    finally:
        sandbox.stop()
    return measured


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]


async def run(start: Start, results: dict[str, Any], *, quick: bool = False) -> None:
    rounds = 1 if quick else 2
    measured: list[dict[str, Any]] = []
    for number in range(rounds):
        _log(f"request to validated change, round {number + 1}/{rounds} ...")
        with tempfile.TemporaryDirectory(prefix="kubecrew-bench-changes-") as tmp:
            measured += await bench_round(start, Path(tmp))
    for clock in ("wall_s", "sandbox_s"):
        values = [m[clock] for m in measured]
        results[f"changes: request to validated change ({clock[:-2]} s)"] = {
            "median": round(statistics.median(values), 1),
            "p95": round(_p95(values), 1),
            "requests": len(values),
        }
    kinds = {m["kind"] for m in measured}
    results["changes: median per kind (wall s / sandbox s)"] = {
        kind: f"{statistics.median(m['wall_s'] for m in measured if m['kind'] == kind):.1f} / "
        f"{statistics.median(m['sandbox_s'] for m in measured if m['kind'] == kind):.0f}"
        for kind in sorted(kinds)
    }
