"""Scene 3, governance, with a model planning the capacity review's reads: the model reads the
Deployments, the capacity policies, the shop's pod usage and shop-min-capacity, and says what
it saw; the review then proposes 5 -> 1 through the policy store, the shop's CapacityPolicy
counters with 3, and web is scaled to exactly 3 under the proposal. The deterministic test's
own checks run here unchanged (tests/support/capacity.py), planner aside.
"""

from __future__ import annotations

from langchain_core.messages import ToolMessage

from agents.runtime.scripted import shown
from kubecrew.demo.scenes import GOVERNANCE_POLICIES
from tests.agents.runtime.model_scenes.model_agents import ModelOperator
from tests.support.capacity import (
    downscale_is_countered_by_capacity_and_applied_as_decided,
    replicas,
    shop_of_five,
)
from tests.support.kubectl import Kubectl

READS = {"list_resources", "list_policies", "top", "get_policy"}
WRITES = {"propose", "scale", "drain", "cordon", "taint", "claim_approval"}


def test_the_downscale_is_countered_to_3_when_a_model_plans_the_reads(
    kubectl: Kubectl, operator: ModelOperator
) -> None:
    downscale_is_countered_by_capacity_and_applied_as_decided(kubectl, operator)

    [model] = operator.models
    seen = model.seen[-1]
    answered = [m for m in seen if isinstance(m, ToolMessage)]
    assert {m.name for m in answered} == READS and all(m.status != "error" for m in answered)
    web = [p for p in shown(seen, "top")["items"] if p["name"].startswith("web-")]
    assert len(web) == 5  # the model read the usage of all five replicas
    assert shown(seen, "get_policy")["name"] == "shop-min-capacity"
    assert set(model.offered) >= READS and not WRITES & set(model.offered)

    calls = operator.called()  # the model's reads first, then the review's own calls
    assert calls[:2] == ["list_resources", "list_policies"]
    assert calls.index("propose") > calls.index("get_policy")


def test_the_review_answer_keeps_the_decision_and_adds_the_model_reading(
    kubectl: Kubectl, operator: ModelOperator
) -> None:
    operator.policy("capacity", GOVERNANCE_POLICIES)
    shop_of_five(kubectl)

    outcome = operator.capacity()
    [saving] = outcome.data["savings"]
    assert saving["applied"] == 3 and replicas(kubectl) == 3
    reading = outcome.data["model"]
    assert reading["planner"] == "model:ScriptedChatModel"
    assert [c["tool"] for c in reading["calls"]][:2] == ["list_resources", "list_policies"]
    assert all(c["error"] == "" for c in reading["calls"])
    said = outcome.answer.split("The model's reading: ", 1)
    assert len(said) == 2 and "web runs 5 replicas" in said[1]
    assert "shop-min-capacity bounds" in said[1]
    assert "3" in said[0]  # the procedure's own answer comes first, with the decision
