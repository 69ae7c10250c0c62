"""Draining a node through the real MCP client against a fresh sandbox: the plan names the budget
that blocks, a drain never breaks a PodDisruptionBudget (it waits, then reports the block), and
once the budget allows one pod at a time the drain moves them one by one to other nodes;
DaemonSet pods stay, bare pods are refused unless forced."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp.shared.memory import create_connected_server_and_client_session
from mcp.types import TextContent

from mcp_servers.kube.settings import KubeSettings
from sandbox.server import Sandbox
from tests.support.kube_tools import KubeTools
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

NS = "drain"


@pytest.fixture
def kube(sandbox: Sandbox) -> KubeTools:
    return KubeTools(KubeSettings(kubeconfig=sandbox.kubeconfig))


@pytest.fixture
def nodes(kubectl: Kubectl) -> list[str]:
    kubectl("create", "namespace", NS)
    return kubectl("get", "nodes", "-o", "jsonpath={.items[*].metadata.name}").split()


def pods_of(kubectl: Kubectl, selector: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = kubectl.json("get", "pods", "-n", NS, "-l", selector)["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


def ready(pod: dict[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def web_on(kubectl: Kubectl, node: str, others: list[str]) -> None:
    """A Deployment of 2, both pods Ready on `node` (the others are cordoned meanwhile)."""
    for other in others:
        kubectl("cordon", other)
    kubectl(
        "apply", "-n", NS, "-f", "-",
        input="""
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      containers: [{name: web, image: "nginx:1.27"}]
""",
    )  # fmt: skip
    eventually(
        lambda: (
            len(pods := pods_of(kubectl, "app=web")) == 2
            and all(ready(p) and p["spec"].get("nodeName") == node for p in pods)
        ),
        what=f"2 ready web pods on {node}",
    )
    for other in others:
        kubectl("uncordon", other)


def budget(kubectl: Kubectl, min_available: int) -> None:
    kubectl(
        "apply", "-n", NS, "-f", "-",
        input=f"""
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {{name: web}}
spec:
  minAvailable: {min_available}
  selector: {{matchLabels: {{app: web}}}}
""",
    )  # fmt: skip
    eventually(
        lambda: (
            kubectl.json("get", "pdb", "web", "-n", NS).get("status", {}).get("disruptionsAllowed")
            == 2 - min_available
        ),
        what=f"pdb web allowing {2 - min_available}",
    )


def mine(pods: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {p["pod"]: p for p in pods if p["pod"].startswith(f"{NS}/")}


def drain_with_progress(kube: KubeTools, **arguments: Any) -> tuple[dict[str, Any], list[str]]:
    """`drain` through the MCP client with a progress callback; the result and the messages."""
    messages: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        messages.append(message or "")

    async def go() -> tuple[dict[str, Any], list[str]]:
        async with create_connected_server_and_client_session(kube.server) as session:
            result = await session.call_tool("drain", arguments, progress_callback=on_progress)
        text = "".join(c.text for c in result.content if isinstance(c, TextContent))
        assert not result.isError, text
        return result.structuredContent or {}, messages

    return anyio.run(go)


def test_drain_waits_for_the_budget_then_moves_pods_one_at_a_time(
    kube: KubeTools, kubectl: Kubectl, nodes: list[str]
) -> None:
    node, others = nodes[0], nodes[1:]
    web_on(kubectl, node, others)
    budget(kubectl, 2)
    webs = sorted(f"{NS}/{p['metadata']['name']}" for p in pods_of(kubectl, "app=web"))

    plan = kube.ok("drain_plan", node=node)
    assert sorted(p["pod"] for p in plan["blocked"] if p["pod"].startswith(NS)) == webs
    assert all(p["pdb"] == f"{NS}/web" and p["wave"] is None for p in plan["blocked"])
    pdb = next(b for b in plan["budgets"] if b["pdb"] == f"{NS}/web")
    assert pdb["blocks"] and pdb["disruptions_allowed"] == 0
    assert sorted(pdb["pods_on_node"]) == webs
    web = next(d for d in plan["disruption"] if d["workload"] == f"Deployment/{NS}/web")
    assert (web["replicas"], web["moving"], web["unavailable_at_once"]) == (2, 2, 0)

    stuck = kube.ok("drain", node=node, timeout_seconds=2)
    assert not stuck["complete"] and stuck["cordoned"]
    assert not mine(stuck["evicted"])
    blocked = mine(stuck["blocked"])
    assert sorted(blocked) == webs
    assert all(
        b["pdb"] == f"{NS}/web" and "disruption budget" in b["reason"] for b in blocked.values()
    )
    assert kubectl.json("get", "node", node)["spec"]["unschedulable"] is True
    assert sorted(f"{NS}/{p['metadata']['name']}" for p in pods_of(kubectl, "app=web")) == webs

    kubectl("patch", "pdb", "web", "-n", NS, "--type=merge", "-p", '{"spec":{"minAvailable":1}}')
    eventually(
        lambda: kubectl.json("get", "pdb", "web", "-n", NS)["status"]["disruptionsAllowed"] == 1,
        what="pdb web allowing 1",
    )
    plan = kube.ok("drain_plan", node=node)
    assert [w for w in plan["order"] if any(p.startswith(NS) for p in w)] == [
        [webs[0]],
        [webs[1]],
    ]
    web = next(d for d in plan["disruption"] if d["workload"] == f"Deployment/{NS}/web")
    assert (web["unavailable_at_once"], web["waves"]) == (1, 2)

    done, progress = drain_with_progress(kube, node=node, timeout_seconds=90)
    assert done["complete"], done
    assert sorted(mine(done["evicted"])) == webs
    assert sorted(m for m in progress if NS in m) == [f"evicted {p}" for p in webs]
    moved = eventually(
        lambda: len(pods := pods_of(kubectl, "app=web")) == 2 and all(map(ready, pods)) and pods,
        what="2 ready web pods again",
    )
    assert all(p["spec"]["nodeName"] in others for p in moved)
    recreated = next(r for r in done["replacements"] if r["workload"] == f"Deployment/{NS}/web")
    assert all(p["node"] in (*others, None) for p in recreated["pods"])


def test_drain_skips_daemonset_pods_and_refuses_bare_pods_unless_forced(
    kube: KubeTools, kubectl: Kubectl, nodes: list[str]
) -> None:
    node = nodes[0]
    kubectl(
        "apply", "-n", NS, "-f", "-",
        input=f"""
apiVersion: apps/v1
kind: DaemonSet
metadata: {{name: agent}}
spec:
  selector: {{matchLabels: {{app: agent}}}}
  template:
    metadata: {{labels: {{app: agent}}}}
    spec: {{containers: [{{name: agent, image: "busybox:1.36"}}]}}
---
apiVersion: v1
kind: Pod
metadata: {{name: bare, labels: {{app: bare}}}}
spec:
  nodeName: {node}
  terminationGracePeriodSeconds: 1
  containers: [{{name: bare, image: "nginx:1.27"}}]
""",
    )  # fmt: skip
    agent = eventually(
        lambda: next(
            (p for p in pods_of(kubectl, "app=agent") if p["spec"].get("nodeName") == node), None
        ),
        what=f"the agent DaemonSet's pod on {node}",
    )
    agent_key = f"{NS}/{agent['metadata']['name']}"
    eventually(lambda: pods_of(kubectl, "app=bare"), what="the bare pod")

    plan = mine(kube.ok("drain_plan", node=node)["pods"])
    assert plan[agent_key]["action"] == "skip" and "DaemonSet" in plan[agent_key]["reason"]
    assert plan[f"{NS}/bare"]["action"] == "refuse" and "force" in plan[f"{NS}/bare"]["reason"]

    refusal = kube.fails("drain", node=node)
    assert f"{NS}/bare" in refusal and "force" in refusal
    assert not kubectl.json("get", "node", node)["spec"].get("unschedulable")

    dry = kube.ok("drain", node=node, force=True, dry_run=True)
    assert dry["dry_run"] and mine(dry["plan"]["pods"])[f"{NS}/bare"]["action"] == "evict"
    assert not kubectl.json("get", "node", node)["spec"].get("unschedulable")

    done = kube.ok("drain", node=node, force=True, timeout_seconds=60)
    assert done["complete"], done
    assert f"{NS}/bare" in mine(done["evicted"])
    assert agent_key in mine(done["skipped"]) and agent_key not in mine(done["evicted"])
    assert not pods_of(kubectl, "app=bare")
    assert agent["metadata"]["uid"] in {p["metadata"]["uid"] for p in pods_of(kubectl, "app=agent")}


def test_read_only_server_plans_drains_but_cannot_drain(sandbox: Sandbox) -> None:
    names = {
        t.name
        for t in KubeTools(KubeSettings(kubeconfig=sandbox.kubeconfig, read_only=True)).tools()
    }
    assert "drain_plan" in names and "drain" not in names
    tools = {t.name: t for t in KubeTools(KubeSettings(kubeconfig=sandbox.kubeconfig)).tools()}
    assert tools["drain_plan"].annotations and tools["drain_plan"].annotations.readOnlyHint
    assert tools["drain"].annotations and tools["drain"].annotations.destructiveHint
