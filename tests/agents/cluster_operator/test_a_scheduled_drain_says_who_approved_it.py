"""A drain the capacity review schedules names what was approved, by whom and when it runs: a
consolidation sre must approve waits; once alice grants it, the next review queues it for the
maintenance window and says "approved by person alice", the window's opening, and that nothing
is cordoned yet. Where policy approves drains itself and the window is open, the review says so
and the next patrol drains the node, its changes naming the cordon and the evictions with the
policy store as the approver. The changes are read from the procedures' results
(`report.changes`), as `kubecrew run` prints them."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import anyio
from mcp.shared.memory import create_connected_server_and_client_session

from agents.cluster_operator.report import change_line, changes
from core.policy.settings import PolicySettings
from mcp_servers.policy.server import build
from sandbox.server import Sandbox
from tests.support.cluster_operator import Operator, window_policy
from tests.support.kubectl import Kubectl
from tests.support.mcp_hosts import answer
from tests.support.waiting import eventually

NODES = ("node-1", "node-2", "node-3")
SEARCH = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: search, namespace: shop}
spec:
  replicas: 1
  selector: {matchLabels: {app: search}}
  template:
    metadata: {labels: {app: search}}
    spec:
      terminationGracePeriodSeconds: 1
      nodeSelector: {kubernetes.io/hostname: node-1}
      containers:
        - {name: app, image: "nginx:1.27", resources: {requests: {cpu: "3", memory: 8Gi}}}
"""
SRE_APPROVES = """\
  approvals:
    - name: every-drain
      actions: [drain]
      approvers: {groups: [sre]}
"""


def with_approvals(policy: str) -> str:
    """The node ChangePolicy, with every drain given to sre."""
    head, rest = policy.split("  maintenance:", 1)
    return f"{head}{SRE_APPROVES}  maintenance:{rest}"


def grant_as_alice(operator: Operator, request: str) -> dict[str, Any]:
    settings = PolicySettings(
        policies=(operator.policies,), store=str(operator.store), person="alice", groups=("sre",)
    )

    async def go() -> dict[str, Any]:
        async with create_connected_server_and_client_session(build(settings)) as session:
            return answer(
                await session.call_tool(
                    "answer_approval", {"request_id": request, "verdict": "grant"}
                )
            )

    return anyio.run(go)


def busy_node_1(kubectl: Kubectl) -> None:
    kubectl("create", "namespace", "shop")
    kubectl("apply", "-f", "-", input=SEARCH)
    kubectl("rollout", "status", "deploy/search", "-n", "shop", "--timeout=60s")


def cordoned(kubectl: Kubectl) -> list[str]:
    return [n for n in NODES if kubectl.json("get", "node", n)["spec"].get("unschedulable")]


def test_a_drain_a_person_granted_is_queued_for_its_window_naming_them(
    sandbox: Sandbox, kubectl: Kubectl, operator: Operator
) -> None:
    policy = window_policy(sandbox, opens_in=timedelta(hours=3))
    operator.policy("change", with_approvals(policy))
    busy_node_1(kubectl)

    first = operator.capacity()
    [asked] = first.data["consolidation"]
    assert asked["outcome"] == "escalated" and changes(first.data) == [], first.answer
    [request] = [a for a in operator.approvals() if a.proposal == asked["proposal"]]
    grant_as_alice(operator, request.id)

    second = operator.capacity()
    [drain] = changes(second.data)
    assert drain["target"] == f"Node {asked['node']}" and drain["field"] == "drain (consolidation)"
    assert drain["approved_by"] == f"person alice (approval {request.id})", drain
    assert drain["proposal"] == asked["proposal"]
    assert drain["when"].startswith("runs in the maintenance window opening at "), drain
    line = change_line(drain)
    assert "nothing cordoned yet" in line and "approved by person alice" in line, line
    assert f"approved by person alice (approval {request.id})" in second.answer, second.answer
    assert "opens at " in second.answer and cordoned(kubectl) == []


def test_a_drain_policy_approves_runs_at_the_next_patrol_and_says_so(
    sandbox: Sandbox, kubectl: Kubectl, operator: Operator
) -> None:
    operator.policy("change", window_policy(sandbox, opens_in=timedelta(0)))
    busy_node_1(kubectl)

    review = operator.capacity()
    [drain] = changes(review.data)
    assert drain["approved_by"] == "policy (the policy store)", drain
    assert drain["when"] == "runs at the next patrol (its maintenance window is open)"
    node = drain["target"].split()[1]

    patrol = operator.patrol()
    made = [c for c in changes(patrol.data) if c["target"] == f"Node {node}"]
    assert len(made) == 1, [change_line(c) for c in changes(patrol.data)]
    assert made[0]["before"] == "schedulable" and made[0]["after"].startswith("cordoned, ")
    assert made[0]["approved_by"] == "policy (the policy store)", made[0]
    assert made[0]["proposal"].startswith("p-") and made[0]["how"].startswith("gated writes")
    eventually(lambda: node in cordoned(kubectl), what=f"{node} cordoned by the patrol")
