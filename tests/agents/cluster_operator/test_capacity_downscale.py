"""Scene 3, governance (cost): the Cluster Operator finds the shop's web underused (5 replicas
using a sliver of the CPU they request), proposes 5 -> 1 with its saving, the shop's
CapacityPolicy counters with 3, reliability outranks cost so the decision is 3, and the agent
scales to exactly 3 under the proposal. The inverse: with counters refused the proposal is
escalated, nothing changes, alice (a shop admin) grants on the policy server, and the next
review applies what was granted, once. The first scene and its checks: tests/support/capacity.py,
which the model-planned twin runs too.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp.shared.memory import create_connected_server_and_client_session

from core.policy.settings import PolicySettings
from kubecrew.demo.scenes import GOVERNANCE_POLICIES as CAPACITY
from mcp_servers.policy.server import build
from tests.support.capacity import (
    downscale_is_countered_by_capacity_and_applied_as_decided,
    replicas,
    shop_of_five,
)
from tests.support.cluster_operator import Operator
from tests.support.kubectl import Kubectl
from tests.support.mcp_hosts import answer


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
    downscale_is_countered_by_capacity_and_applied_as_decided(kubectl, operator)


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
