"""The capacity review's right-size beat with a model planning the reads: the model reads the
Deployments with their requests, every policy, the shop's pod usage and the capacity and cost
policies' documents, and says what each Deployment asks against what it uses. The review then
proposes web's CPU request at its use over TARGET, the cost policy supports it, and
`set_resources` applies exactly that under the proposal; api's floor rejects its resize; a
second review changes nothing. The deterministic test's own checks run here unchanged
(tests/support/capacity.py), planner aside.
"""

from __future__ import annotations

from langchain_core.messages import ToolMessage

from agents.runtime.scripted import shown
from kubecrew.demo.scenes import GOVERNANCE_POLICIES
from sandbox.server import Sandbox
from tests.agents.runtime.model_scenes.model_agents import ModelOperator
from tests.agents.runtime.model_scenes.scripts import requests_reader
from tests.support.capacity import (
    FLOOR_RULE,
    busy_at_20m,
    capacity_review_right_sizes_what_it_cannot_scale_down,
    cpu_request,
)
from tests.support.kubectl import Kubectl

READS = {"list_resources", "list_policies", "top", "get_policy"}
WRITES = {"propose", "set_resources", "scale", "drain", "cordon", "claim_approval"}


def test_web_is_right_sized_as_decided_when_a_model_plans_the_reads(
    sandbox: Sandbox, kubectl: Kubectl, operator: ModelOperator
) -> None:
    operator.script = requests_reader
    capacity_review_right_sizes_what_it_cannot_scale_down(sandbox, kubectl, operator)

    first, again = operator.models  # the review that resized web, then the one that did not
    seen = first.seen[-1]
    answered = [m for m in seen if isinstance(m, ToolMessage)]
    assert {m.name for m in answered} == READS and all(m.status != "error" for m in answered)
    shop = [p["name"] for p in shown(seen, "top")["items"]]
    assert sorted(n.split("-")[0] for n in shop) == ["api", "web", "web", "web"]
    documents = {shown([m], "get_policy")["name"] for m in answered if m.name == "get_policy"}
    assert documents == {"shop-min-capacity", "shop-underused", "api-cpu-floor"}
    assert set(first.offered) >= READS and not WRITES & set(first.offered)
    assert not WRITES & set(again.offered)


def test_the_review_answer_keeps_the_resize_and_adds_the_model_reading(
    sandbox: Sandbox, kubectl: Kubectl, operator: ModelOperator
) -> None:
    operator.script = requests_reader
    operator.policy("capacity", GOVERNANCE_POLICIES + FLOOR_RULE)
    busy_at_20m(sandbox, kubectl)

    outcome = operator.capacity()
    web = next(r for r in outcome.data["rightsizing"] if r["workload"] == "Deployment/shop/web")
    assert web["outcome"] == "approved", outcome.answer
    assert cpu_request(kubectl, "web") == web["applied"] == web["cpu_to"]
    reading = outcome.data["model"]
    assert reading["planner"] == "model:ScriptedChatModel"
    assert [c["tool"] for c in reading["calls"]][:2] == ["list_resources", "list_policies"]
    assert all(c["error"] == "" for c in reading["calls"])
    said = outcome.answer.split("The model's reading: ", 1)
    assert len(said) == 2 and "web asks 500m per replica and uses about" in said[1]
    assert "api-cpu-floor" in said[1] and "shop-underused" in said[1]
    assert f"500m -> {web['cpu_to']} over 3 replica(s)" in said[0]  # the procedure's, first

    called = operator.called()  # the model's reads first, then the review's own calls
    assert called.index("propose") > max(i for i, c in enumerate(called) if c == "get_policy")
    assert called.count("set_resources") == 1
