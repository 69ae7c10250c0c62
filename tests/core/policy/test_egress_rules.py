"""EgressPolicy judges a NetworkPolicy applied in its namespaces: only allowed egress passes."""

from __future__ import annotations

from typing import Any

import pytest

from core.policy.catalog import PolicySet
from tests.support.policies import check, defaults

RULE = "EgressPolicy shop-egress / rule allowed-destinations"
DNS = {
    "to": [
        {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
            "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
        }
    ],
    "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
}
PAYMENTS = {"to": [{"ipBlock": {"cidr": "203.0.113.10/32"}}], "ports": [{"port": 443}]}


def network_policy(*egress: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "egress", "namespace": "shop"},
        "spec": {"podSelector": {}, "policyTypes": ["Egress"], "egress": list(egress)},
    }


@pytest.fixture(scope="module")
def policies() -> PolicySet:
    return defaults()


def test_dns_and_the_payments_api_are_allowed(policies: PolicySet) -> None:
    live = network_policy(DNS, PAYMENTS)
    report = check(policies, "apply", "networkpolicy/egress", live=live)
    finding = next(f for f in report.findings if str(f.citation) == RULE)
    assert finding.effect == "pass"
    assert report.verdict.outcome == "allow"
    assert [(s.team, s.owner) for s in report.stakeholders] == [
        ("platform", True),
        ("shop", False),
    ]


@pytest.mark.parametrize(
    ("rule", "problem"),
    [
        ({"ports": [{"port": 443}]}, "egress[1] has no 'to': every destination"),
        ({"to": [{"ipBlock": {"cidr": "203.0.113.0/24"}}]}, "egress[1] has no 'ports': every port"),
        (
            {"to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}], "ports": [{"port": 443}]},
            "egress[1].to[0] reaches 0.0.0.0/0, outside the allowed CIDRs",
        ),
        (
            {"to": [{"ipBlock": {"cidr": "203.0.113.0/24"}}], "ports": [{"port": 80}]},
            "egress[1].to[0] uses ports TCP/80 that no single destination allows",
        ),
        (
            {"to": [{"ipBlock": {"cidr": "203.0.113.0/24"}}], "ports": [{"port": "https"}]},
            "egress[1].to[0] uses ports TCP/https that no single destination allows",
        ),
        (
            {"to": [{"podSelector": {}}], "ports": [{"protocol": "UDP", "port": 53}]},
            "egress[1].to[0] reaches pods (all) in namespace shop, not an allowed destination",
        ),
    ],
    ids=["no-to", "no-ports", "the-internet", "wrong-port", "named-port", "own-namespace"],
)
def test_egress_beyond_the_destinations_is_rejected(
    policies: PolicySet, rule: dict[str, Any], problem: str
) -> None:
    report = check(policies, "apply", "networkpolicy/egress", live=network_policy(DNS, rule))
    finding = next(f for f in report.findings if str(f.citation) == RULE)
    assert finding.effect == "reject"
    assert finding.message == f"egress beyond the allowed destinations: {problem}"
    assert report.verdict.outcome == "reject"
    assert report.verdict.reasons[-1] == f"security rejects: {finding}"


def test_without_the_object_the_rule_cannot_say_yes(policies: PolicySet) -> None:
    report = check(policies, "apply", "networkpolicy/egress")
    finding = next(f for f in report.findings if str(f.citation) == RULE)
    assert finding.effect == "error"
    assert report.verdict.outcome == "escalate"


def test_other_actions_in_the_namespace_are_not_about_egress(policies: PolicySet) -> None:
    report = check(policies, "scale", "deployment/web", replicas=(5, 4))
    assert "EgressPolicy" not in {a.kind for a in report.applicable}
