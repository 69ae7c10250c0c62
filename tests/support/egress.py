"""The Platform agent's egress propagation as its deterministic test and its model-planned twin
(tests/agents/runtime/model_scenes) both run it, so the same checks hold whoever plans: the org
EgressPolicy reaches team-a by a merged PR and team-b by the gated apply, and scratch gets
nothing. `by_namespace`, `rendered` and `live_egress` read a propagation's rows, what the
policy renders for a namespace, and the egress rules live in it.
"""

from __future__ import annotations

from typing import Any

import yaml

from agents.platform.rendering import DNS_ANNOTATION, render
from core.policy.documents.egress import EgressPolicy
from tests.support.platform_agent import EGRESS, Platform


def by_namespace(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["namespace"]: row for row in result["namespaces"]}


def rendered(namespace: str, text: str = EGRESS) -> dict[str, Any]:
    return render(EgressPolicy.model_validate(yaml.safe_load(text)), namespace)


def live_egress(platform: Platform, namespace: str) -> list[dict[str, Any]]:
    [live] = platform.netpols(namespace)
    assert live["metadata"]["name"] == "egress-team-egress"
    egress: list[dict[str, Any]] = live["spec"]["egress"]
    return egress


def the_policy_reaches_every_covered_namespace_and_only_those(platform: Platform) -> None:
    """The scene of tests/agents/platform/test_egress_propagation.py, whoever plans."""
    outcome = platform.propagate()
    rows = by_namespace(outcome.data)
    assert set(rows) == {"team-a", "team-b"}, outcome.answer
    assert "scratch" in outcome.data["uncovered"] and platform.netpols("scratch") == []
    assert rows["team-a"]["channel"] == "git" and rows["team-a"]["delivered"] == "merged"
    assert rows["team-a"]["repo"] == "team-a-gitops" and rows["team-a"]["pr"] == 1
    assert rows["team-b"]["channel"] == "direct" and rows["team-b"]["delivered"] == "applied"
    assert all(r["compliant"] and r["before"] == "missing" for r in rows.values()), outcome.answer
    for namespace in ("team-a", "team-b"):
        assert live_egress(platform, namespace) == rendered(namespace)["spec"]["egress"]
    [live] = platform.netpols("team-b")  # DNS names are kept beside the rule, not dropped
    assert live["metadata"]["annotations"][DNS_ANNOTATION] == "api.payments.example.com"
    assert outcome.data["unrendered"] == []  # the payments API has its CIDR too
    assert "2 compliant, 0 not" in outcome.answer

    # The owners were told: each namespace's team is a stakeholder of its notice.
    for namespace in ("team-a", "team-b"):
        record = platform.proposal(rows[namespace]["proposal"])
        assert record.proposal.action.type == "apply"
        assert str(record.proposal.action.target).lower().endswith("egress-team-egress")
        told = [e.evaluation.stakeholder for e in record.transcript if e.evaluation]
        assert namespace in told, told
        assert record.decision is not None and record.decision.outcome == "approved"
    applied = [r for r in platform.mutations() if r.result == "applied"]
    assert [r.details.get("proposal") for r in applied] == [rows["team-b"]["proposal"]]

    # A second run finds everything in force and does nothing: no notice, no PR, no write.
    again = platform.propagate()
    assert all(r["delivered"] == "nothing to do" for r in again.data["namespaces"])
    assert not {"propose", "apply", "propose_change"} & set(platform.called())
