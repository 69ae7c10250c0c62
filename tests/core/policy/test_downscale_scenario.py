"""The issue's conflict, dry-run against the default policies.

The Cluster Operator wants web in the shop down from 5 to 1 replicas: it is underused (cost
supports), the Dev Team's CapacityPolicy keeps 3 (reliability rejects), and the Platform's
PriorityPolicy puts reliability before cost, so the verdict is a counter-offer of 3.
"""

from __future__ import annotations

import pytest

from core.policy.catalog import LoadedPolicy, PolicySet
from core.policy.documents import PriorityPolicy
from tests.support.policies import check, defaults, fired

LOW = {"cpu_utilization": 0.1}
MIN_REPLICAS = "CapacityPolicy shop-min-capacity / rule min-replicas"
UNDERUSED = "CostPolicy shop-underused / rule underused"
FRACTION = "ChangePolicy shop-changes / rule max-replica-change-fraction"


@pytest.fixture(scope="module")
def policies() -> PolicySet:
    return defaults()


def test_five_to_one_is_countered_with_three_citing_the_capacity_policy(
    policies: PolicySet,
) -> None:
    report = check(policies, "scale", "deployment/web", replicas=(5, 1), metrics=LOW)
    assert report.verdict.outcome == "counter"
    assert report.verdict.counter is not None and report.verdict.counter.replicas == 3
    assert fired(report) == {MIN_REPLICAS: "reject", UNDERUSED: "support", FRACTION: "reject"}
    rejection = next(f for f in report.findings if str(f.citation) == MIN_REPLICAS)
    assert rejection.message == "Deployment shop/web must keep at least 3 replicas; 1 asked"
    assert rejection.concern == "reliability" and rejection.team == "shop"
    opinions = {verdict.concern: verdict.opinion for verdict in report.concerns}
    assert opinions == {"security": "none", "reliability": "reject", "cost": "support"}
    assert report.verdict.reasons[0] == "reliability outranks cost, which supports it"
    assert report.priority_source == "PriorityPolicy org-priorities"


def test_five_to_three_is_allowed(policies: PolicySet) -> None:
    report = check(policies, "scale", "deployment/web", replicas=(5, 3), metrics=LOW)
    assert report.verdict.outcome == "allow"
    assert report.verdict.counter is None and report.verdict.approvals == []
    assert fired(report) == {UNDERUSED: "support"}
    assert report.verdict.reasons == ["cost supports it and no higher concern objects"]


def test_the_cost_rule_fires_on_low_utilization_only(policies: PolicySet) -> None:
    low = check(policies, "scale", "deployment/web", replicas=(5, 3), metrics=LOW)
    high = check(
        policies, "scale", "deployment/web", replicas=(5, 3), metrics={"cpu_utilization": 0.6}
    )
    unknown = check(policies, "scale", "deployment/web", replicas=(5, 3))
    messages = {
        name: next(f for f in report.findings if str(f.citation) == UNDERUSED)
        for name, report in (("low", low), ("high", high), ("unknown", unknown))
    }
    assert messages["low"].effect == "support"
    assert messages["low"].message == (
        "cpu_utilization 0.10 over 1h is below 0.20: underused, downscale saves money"
    )
    assert messages["high"].effect == "warn"
    assert messages["unknown"].effect == "warn"
    assert "metric cpu_utilization (average over 1h) was not given" in messages["unknown"].message


def test_the_current_replicas_come_from_the_live_object(policies: PolicySet) -> None:
    live = {"metadata": {"name": "web", "labels": {"app": "web"}}, "spec": {"replicas": 5}}
    report = check(policies, "scale", "deployment/web", replicas=(None, 1), metrics=LOW, live=live)
    assert report.action.replicas is not None and report.action.replicas.from_ == 5
    assert fired(report)[UNDERUSED] == "support"
    assert report.verdict.counter is not None and report.verdict.counter.replicas == 3


def test_a_critical_workload_is_countered_with_its_own_minimum(policies: PolicySet) -> None:
    labels = {"kubecrew.io/tier": "critical"}
    report = check(policies, "scale", "deployment/web", replicas=(6, 4), labels=labels, metrics=LOW)
    assert fired(report) == {
        "CapacityPolicy shop-min-capacity / rule critical-headroom": "reject",
        UNDERUSED: "support",
    }
    assert report.verdict.counter is not None and report.verdict.counter.replicas == 5


def test_the_priority_order_decides_the_same_conflict(policies: PolicySet) -> None:
    """With cost above reliability, the same findings allow the downscale."""
    cost_first = PriorityPolicy.model_validate(
        {"metadata": {"name": "cost-first"}, "spec": {"order": ["cost", "reliability"]}}
    )
    kept = [p for p in policies if p.kind not in ("PriorityPolicy", "ChangePolicy")]
    report = check(
        PolicySet([*kept, LoadedPolicy(cost_first)]),
        "scale",
        "deployment/web",
        replicas=(5, 1),
        metrics=LOW,
    )
    assert report.priority == ["cost", "reliability", "security"]
    assert report.verdict.outcome == "allow"
    assert report.verdict.reasons == [
        "cost supports it and no higher concern objects",
        "cost outranks reliability, whose rejection does not bind",
    ]


def test_the_shop_team_owns_its_workloads(policies: PolicySet) -> None:
    report = check(policies, "scale", "deployment/web", replicas=(5, 3))
    assert [(s.team, s.agent, s.owner) for s in report.stakeholders] == [("shop", "dev-team", True)]
    assert [a.policy for a in report.applicable] == [
        "shop-min-capacity",
        "shop-underused",
        "shop-changes",
    ]


def test_a_workload_outside_the_shop_meets_none_of_its_policies(policies: PolicySet) -> None:
    report = check(policies, "scale", "deployment/web", namespace="other", replicas=(5, 1))
    assert report.applicable == [] and report.stakeholders == []
    assert report.verdict.outcome == "allow"
