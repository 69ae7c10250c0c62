"""Egress propagation (the Platform agent) with a model planning the reads: the model lists the
EgressPolicies, reads team-egress, lists the namespaces its selector covers and the live
NetworkPolicies, and says what it saw. The propagation then renders, tells the owners, opens
and merges team-a's PR, applies team-b's under its proposal and confirms both from live state,
exactly as with the deterministic brain: that test's own checks run here unchanged
(tests/support/egress.py), planner aside.
"""

from __future__ import annotations

from langchain_core.messages import ToolMessage

from agents.runtime.scripted import shown
from tests.agents.runtime.model_scenes.model_agents import ModelPlatform
from tests.support.egress import the_policy_reaches_every_covered_namespace_and_only_those

READS = {"list_policies", "get_policy", "list_resources"}


def test_the_policy_reaches_every_covered_namespace_when_a_model_plans_the_reads(
    platform: ModelPlatform,
) -> None:
    the_policy_reaches_every_covered_namespace_and_only_those(platform)

    first, again = platform.models  # the propagation, then the run that found all in force
    seen = first.seen[-1]
    answered = [m for m in seen if isinstance(m, ToolMessage)]
    assert {m.name for m in answered} == READS and all(m.status != "error" for m in answered)
    assert shown(seen, "get_policy")["name"] == "team-egress"
    namespaces = next(m for m in answered if m.name == "list_resources")
    assert sorted(r["name"] for r in shown([namespaces], "list_resources")["items"]) == [
        "team-a", "team-b",
    ]  # fmt: skip
    assert shown(seen, "list_resources")["items"] == []  # no NetworkPolicy before the first run
    assert set(first.offered) >= READS
    assert not {"apply", "propose", "propose_change", "merge_pr", "sync"} & set(first.offered)
    live = {(r["namespace"], r["name"]) for r in shown(again.seen[-1], "list_resources")["items"]}
    assert live == {("team-a", "egress-team-egress"), ("team-b", "egress-team-egress")}


def test_a_compliance_question_with_a_model_reads_and_changes_nothing(
    platform: ModelPlatform,
) -> None:
    looked = platform.ask("which namespaces are not compliant with the egress policy?")
    assert looked.task == "compliance"
    assert "0 compliant, 2 not" in looked.answer
    assert "The model's reading: The egress policy covers team-a, team-b" in looked.answer
    assert [c["tool"] for c in looked.data["model"]["calls"]] == [
        "list_policies", "get_policy", "list_resources", "list_resources",
    ]  # fmt: skip
    assert not {"propose", "apply", "propose_change"} & set(platform.called())
    assert platform.netpols("team-a") == [] and platform.netpols("team-b") == []
