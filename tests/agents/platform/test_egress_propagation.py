"""Egress propagation, confirmed from live state: the org EgressPolicy for the `team` class
reaches team-a by a merged and synced PR to its GitOps repository and team-b by the gated apply;
scratch, outside the class, gets nothing; the owners are told by a proposal each. A person's
later hand edit is reported non-compliant on the next run and put back (by a PR where the edit
was made in git); a changed EgressPolicy re-renders and updates every covered namespace; an
apply the policy store forbids leaves the namespace reported non-compliant, with the reason.
The first scene and its checks: tests/support/egress.py, which the model-planned twin runs too.
"""

from __future__ import annotations

import json

from tests.support.egress import (
    by_namespace,
    live_egress,
    rendered,
    the_policy_reaches_every_covered_namespace_and_only_those,
)
from tests.support.platform_agent import EGRESS, Platform

PATH_A = "platform/egress/team-a/egress-team-egress.yaml"
WIDE = {"to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}], "ports": [{"protocol": "TCP", "port": 443}]}
NO_DIRECT = """\
apiVersion: kubecrew.io/v1alpha1
kind: ChangePolicy
metadata: {name: team-b-changes, labels: {kubecrew.io/team: team-b}}
spec:
  selector: {namespaces: [team-b]}
  directPatches: forbidden
"""
APPROVED_BY_A_PERSON = """\
apiVersion: kubecrew.io/v1alpha1
kind: ChangePolicy
metadata: {name: team-a-changes, labels: {kubecrew.io/team: team-a}}
spec:
  selector: {namespaces: [team-a]}
  approvals:
    - name: network-changes
      actions: [apply]
      approvers: {groups: [team-a-admins]}
      expiresAfter: 8h
"""


def test_the_policy_reaches_every_covered_namespace_and_only_those(platform: Platform) -> None:
    the_policy_reaches_every_covered_namespace_and_only_those(platform)


def test_a_hand_edit_is_reported_then_put_back(platform: Platform) -> None:
    platform.propagate()
    # team-b: a person widens egress in the cluster; team-a: a person widens it in git.
    patch = json.dumps({"spec": {"egress": [*rendered("team-b")["spec"]["egress"], WIDE]}})
    platform.kubectl("patch", "networkpolicy", "egress-team-egress", "-n", "team-b",
                     "--type=merge", "-p", patch)  # fmt: skip
    platform.edit_in_git(PATH_A, "cidr: 203.0.113.0/24", "cidr: 0.0.0.0/0")
    platform.sync()

    looked = platform.ask("which namespaces are not compliant with the egress policy?")
    rows = by_namespace(looked.data)
    assert looked.task == "compliance" and not any(r["compliant"] for r in rows.values())
    assert any("0.0.0.0/0" in why for why in rows["team-a"]["why"]), rows["team-a"]
    assert any("spec.egress" in why for why in rows["team-b"]["why"]), rows["team-b"]
    assert "0 compliant, 2 not" in looked.answer
    assert not {"propose", "apply", "propose_change"} & set(platform.called())  # only looked

    fixed = platform.propagate()
    rows = by_namespace(fixed.data)
    assert all(r["compliant"] and r["before"] == "differs" for r in rows.values()), fixed.answer
    assert rows["team-a"]["delivered"] == "merged" and rows["team-a"]["pr"] == 2
    assert rows["team-b"]["delivered"] == "applied"
    for namespace in ("team-a", "team-b"):
        assert live_egress(platform, namespace) == rendered(namespace)["spec"]["egress"]


def test_a_changed_egress_policy_is_rendered_again_everywhere(platform: Platform) -> None:
    platform.propagate()
    changed = EGRESS.replace("port: 443}]", "port: 443}, {protocol: TCP, port: 8443}]")
    platform.policy("egress", changed)

    outcome = platform.propagate()
    rows = by_namespace(outcome.data)
    assert all(r["before"] == "differs" and r["compliant"] for r in rows.values()), outcome.answer
    for namespace in ("team-a", "team-b"):
        egress = live_egress(platform, namespace)
        assert egress == rendered(namespace, changed)["spec"]["egress"]
        assert {"protocol": "TCP", "port": 8443} in egress[1]["ports"]


def test_an_apply_the_policy_forbids_is_reported_non_compliant(platform: Platform) -> None:
    platform.policy("team-b-changes", NO_DIRECT)
    outcome = platform.propagate()
    rows = by_namespace(outcome.data)
    assert rows["team-a"]["compliant"], outcome.answer
    refused = rows["team-b"]
    assert not refused["compliant"] and refused["delivered"] == "refused", outcome.answer
    assert any("missing" in why for why in refused["why"])
    assert any("direct-patches" in why or "pull request" in why for why in refused["why"]), refused
    assert platform.netpols("team-b") == [] and "apply" not in platform.called()
    assert "1 compliant, 1 not" in outcome.answer


def test_a_pr_waiting_for_a_person_is_not_taken_for_enforcement(platform: Platform) -> None:
    platform.policy("team-a-changes", APPROVED_BY_A_PERSON)
    outcome = platform.propagate()
    waiting = by_namespace(outcome.data)["team-a"]
    assert waiting["delivered"] == "pr-open" and waiting["pr"] == 1, outcome.answer
    assert not waiting["compliant"] and platform.netpols("team-a") == []
    assert any("PR not merged" in why for why in waiting["why"]), waiting
    assert any("missing" in why for why in waiting["why"]), waiting

    again = platform.propagate()  # the same change: the open PR is reused, not doubled
    assert by_namespace(again.data)["team-a"]["pr"] == 1, again.answer
