"""Scene 3, governance (cost): the Cluster Operator finds the shop's web underused (5 replicas
using a sliver of the CPU they request), proposes 5 -> 1 with its saving, the shop's
CapacityPolicy counters with 3, reliability outranks cost so the decision is 3, and the agent
scales to exactly 3 under the proposal. The inverse: with counters refused the proposal is
escalated, nothing changes, alice (a shop admin) grants on the policy server, and the next
review applies what was granted, once.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from mcp.shared.memory import create_connected_server_and_client_session

from core.policy.settings import PolicySettings
from kubecrew.demo.scenes import GOVERNANCE_POLICIES as CAPACITY
from mcp_servers.policy.server import build
from tests.agents.cluster_operator.conftest import Operator
from tests.support.kubectl import Kubectl
from tests.support.mcp_hosts import answer
from tests.support.shop import WEB
from tests.support.waiting import eventually


def shop_of_five(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", input=WEB)
    kubectl("scale", "deploy/web", "-n", "shop", "--replicas=5")
    kubectl("rollout", "status", "deploy/web", "-n", "shop", "--timeout=60s")

    def measured() -> bool:
        path = "/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods"
        top = json.loads(kubectl("get", "--raw", path))
        return len(top["items"]) == 5

    eventually(measured, what="metrics for the 5 web pods")


def replicas(kubectl: Kubectl) -> int:
    return int(kubectl("get", "deploy/web", "-n", "shop", "-o", "jsonpath={.spec.replicas}"))


def grant_as_alice(operator: Operator, request: str) -> dict[str, Any]:
    settings = PolicySettings(
        policies=(operator.policies,), store=str(operator.store), person="alice",
        groups=("shop-admins", "sre"),
    )  # fmt: skip

    async def go() -> dict[str, Any]:
        async with create_connected_server_and_client_session(build(settings)) as session:
            return answer(
                await session.call_tool(
                    "answer_approval", {"request_id": request, "verdict": "grant"}
                )
            )

    return anyio.run(go)


def test_downscale_is_countered_by_capacity_and_applied_as_decided(
    kubectl: Kubectl, operator: Operator
) -> None:
    operator.policy("capacity", CAPACITY)
    shop_of_five(kubectl)

    outcome = operator.capacity()
    [saving] = outcome.data["savings"]
    assert saving["workload"] == "Deployment/shop/web" and saving["proposed"] == 1
    assert saving["savings_per_month"] > 0 and saving["utilization"] < 0.2
    assert saving["outcome"] == "approved-as-countered", outcome.answer
    assert saving["applied"] == 3 and replicas(kubectl) == 3

    record = operator.proposal(saving["proposal"])
    assert record.proposal.action.replicas is not None
    assert record.proposal.action.replicas.to == 1
    assert record.decision is not None and record.decision.action.replicas is not None
    assert record.decision.action.replicas.to == 3
    told = [e.describe() for e in record.transcript]
    kinds = [e.kind for e in record.transcript]
    assert kinds[0] == "proposed" and "decided" in kinds
    assert any("counter-offer replicas=3" in line for line in told), told
    assert any("CapacityPolicy shop-min-capacity" in line for line in told), told
    scaled = [r for r in operator.mutations() if r.result == "applied"]
    assert [r.summary for r in scaled] == [
        f"scale: scale Deployment shop/web 5 -> 3 replicas directly under proposal "
        f"{saving['proposal']}"
    ]
    assert "propose" in operator.called() and "scale" in operator.called()


def test_a_refused_counter_waits_for_a_person_and_applies_what_was_granted_once(
    kubectl: Kubectl, operator: Operator
) -> None:
    operator.policy("capacity", CAPACITY)
    shop_of_five(kubectl)

    waiting = operator.capacity(counters="refuse")
    [saving] = waiting.data["savings"]
    assert saving["outcome"] == "escalated", waiting.answer
    assert saving["applied"] is None and replicas(kubectl) == 5
    assert "scale" not in operator.called()

    escalated = operator.proposal(saving["proposal"]).decision
    assert escalated is not None and escalated.outcome == "escalated"  # a person decides
    pending = [a for a in operator.approvals() if a.proposal == saving["proposal"]]
    assert len(pending) == 1 and pending[0].state == "pending"
    granted = grant_as_alice(operator, pending[0].id)
    decided = granted["decision"]["action"]["replicas"]["to"]

    applied = operator.capacity(counters="refuse")
    [done] = [s for s in applied.data["savings"] if s["proposal"] == saving["proposal"]]
    assert done["applied"] == decided and replicas(kubectl) == decided
    scaled = [r for r in operator.mutations() if r.result == "applied"]
    assert len(scaled) == 1 and f"under proposal {saving['proposal']}" in scaled[0].summary
