"""ChangePolicy gates hold whichever concern wins: approvals, windows, blast radius, channels."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from core.policy.catalog import PolicySet
from core.policy.loading import parse_text
from tests.support.policies import check, defaults, fired

DRAINS = "ChangePolicy node-changes / rule large-drains"
WINDOW = "ChangePolicy node-changes / rule maintenance-window"
EVICTIONS = "ChangePolicy node-changes / rule max-evictions-per-hour"
WEDNESDAY_NOON = datetime(2026, 12, 2, 11, 0, tzinfo=UTC)  # 12:00 in Paris
WEDNESDAY_NIGHT = datetime(2026, 12, 2, 22, 30, tzinfo=UTC)  # 23:30 in Paris


@pytest.fixture(scope="module")
def policies() -> PolicySet:
    return defaults()


def test_a_large_drain_needs_sre_approval_and_waits_for_the_window(policies: PolicySet) -> None:
    report = check(
        policies, "drain", "node/worker-2", namespace=None, pods=14,
        metrics={"evictions_last_hour": 3}, now=WEDNESDAY_NOON,
    )  # fmt: skip
    assert fired(report) == {
        DRAINS: "require-approval",
        WINDOW: "defer",
        "CostPolicy node-consolidation / rule underused": "warn",
    }
    verdict = report.verdict
    assert verdict.outcome == "allow"
    assert [(str(n.citation), n.approvers.groups, n.min_approvals) for n in verdict.approvals] == [
        (DRAINS, ["sre"], 1)
    ]
    assert verdict.not_before == datetime(2026, 12, 2, 21, 0, tzinfo=UTC)  # 22:00 in Paris
    assert [(s.team, s.owner) for s in report.stakeholders] == [("cluster-ops", True)]


def test_a_small_drain_inside_the_window_passes_every_gate(policies: PolicySet) -> None:
    report = check(
        policies, "drain", "node/worker-2", namespace=None, pods=4,
        metrics={"evictions_last_hour": 3, "cpu_utilization": 0.1}, now=WEDNESDAY_NIGHT,
    )  # fmt: skip
    assert fired(report) == {"CostPolicy node-consolidation / rule underused": "support"}
    effects = {str(f.citation): f.effect for f in report.findings}
    assert effects[WINDOW] == "pass" and effects[EVICTIONS] == "pass" and effects[DRAINS] == "pass"
    assert report.verdict.outcome == "allow" and report.verdict.not_before is None


def test_too_many_evictions_in_the_hour_reject_the_drain(policies: PolicySet) -> None:
    report = check(
        policies, "drain", "node/worker-2", namespace=None, pods=8,
        metrics={"evictions_last_hour": 25}, now=WEDNESDAY_NIGHT,
    )  # fmt: skip
    finding = next(f for f in report.findings if str(f.citation) == EVICTIONS)
    assert finding.effect == "reject"
    assert finding.message == "8 evictions after 25 in the last hour makes 33; at most 30"
    assert report.verdict.outcome == "reject" and report.verdict.counter is None


def test_a_gate_missing_its_input_escalates_instead_of_allowing(policies: PolicySet) -> None:
    report = check(policies, "drain", "node/worker-2", namespace=None, pods=4, now=WEDNESDAY_NIGHT)
    finding = next(f for f in report.findings if str(f.citation) == EVICTIONS)
    assert finding.effect == "error"
    assert finding.message == (
        "rule max-evictions-per-hour could not be evaluated: it needs action.pods and "
        "metrics.evictions_last_hour"
    )
    assert report.verdict.outcome == "escalate"
    assert report.verdict.reasons[-1] == f"a person decides, since {finding.message}"


def test_deleting_in_the_shop_needs_shop_admins(policies: PolicySet) -> None:
    report = check(policies, "delete", "configmap/settings")
    assert fired(report) == {"ChangePolicy shop-changes / rule deletes": "require-approval"}
    assert report.verdict.outcome == "allow"
    assert report.verdict.approvals[0].approvers.groups == ["shop-admins"]


def test_deleting_a_shop_workload_is_rejected_and_needs_approval(policies: PolicySet) -> None:
    report = check(policies, "delete", "deployment/web")
    assert report.verdict.outcome == "reject" and report.verdict.counter is None
    assert len(report.verdict.approvals) == 1


PR_ONLY = """
apiVersion: kubecrew.io/v1alpha1
kind: ChangePolicy
metadata: {name: gitops-only}
spec:
  selector: {namespaces: [shop]}
  directPatches: forbidden
  rules:
    - name: no-friday-deploys
      actions: [apply]
      when: 'now.getDayOfWeek() == 5'
      message: no deploys on Fridays
"""


@pytest.fixture(scope="module")
def pr_only() -> PolicySet:
    report = parse_text(PR_ONLY, path="pr-only.yaml")
    assert not report.problems
    return PolicySet(report.policies)


def test_forbidden_direct_patches_are_countered_with_a_pull_request(pr_only: PolicySet) -> None:
    direct = check(pr_only, "scale", "deployment/web", replicas=(5, 4))
    assert direct.verdict.outcome == "counter"
    assert direct.verdict.counter is not None and direct.verdict.counter.via == "pull-request"
    assert direct.verdict.counter.replicas is None
    through_git = check(pr_only, "scale", "deployment/web", replicas=(5, 4), via="pull-request")
    assert through_git.verdict.outcome == "allow"


def test_a_custom_rule_sees_the_time(pr_only: PolicySet) -> None:
    friday = datetime(2026, 12, 4, 10, 0, tzinfo=UTC)
    report = check(pr_only, "apply", "deployment/web", via="pull-request", now=friday)
    assert fired(report) == {"ChangePolicy gitops-only / rule no-friday-deploys": "reject"}
    assert report.verdict.outcome == "reject"
    wednesday = check(pr_only, "apply", "deployment/web", via="pull-request", now=WEDNESDAY_NOON)
    assert wednesday.verdict.outcome == "allow"
