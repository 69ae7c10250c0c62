"""Egress propagation across two live sandboxes named as contexts of one kubeconfig (east, west).

On east, team-a comes from the team's repository, whose gitops server syncs to east, and team-b
is labelled into the class by hand. On west, team-a was made by hand with the same labels and
team-c joined the class; no configured repository syncs to west. One propagation delivers east's
team-a by a merged and synced PR and confirms it from east's live state; east's team-b, which no
repository manages, and all of west are reported and left as they were: across clusters
nothing is written directly. West is then confirmed from its own live state: compliant once it
carries the NetworkPolicy, and reported again, untouched, when someone widens it there.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sandbox.server import Options, Sandbox
from tests.support.clock import RATE
from tests.support.egress import live_egress, rendered
from tests.support.fleet import across, by_cluster, platform_fleet
from tests.support.gitops import git
from tests.support.kubectl import Kubectl
from tests.support.platform_agent import CLASS, REPO, Platform

PATH_A = "platform/egress/team-a/egress-team-egress.yaml"
WIDE = {"to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}], "ports": [{"protocol": "TCP", "port": 443}]}


@pytest.fixture
def west(tmp_path: Path) -> Iterator[Sandbox]:
    with Sandbox(Options(home=tmp_path / "west", nodes=1, rate=RATE)) as running:
        yield running


def netpols(kubectl: Kubectl, namespace: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = kubectl.json("get", "networkpolicies", "-n", namespace)["items"]
    return items


def test_only_a_cluster_a_repository_syncs_to_is_delivered_to_and_each_is_confirmed_live(
    platform: Platform, west: Sandbox, tmp_path: Path
) -> None:
    west_kubectl = Kubectl(west.kubeconfig, tmp_path / "west-cache")
    for namespace, labels in (("team-a", [f"kubecrew.io/gitops-repo={REPO}"]), ("team-c", [])):
        west_kubectl("create", "namespace", namespace)
        west_kubectl("label", "namespace", namespace, f"{CLASS}=team", *labels)
    platform_fleet(platform, west.kubeconfig, tmp_path)

    first = across(platform, "propagate")
    rows = by_cluster(first.data)
    assert first.data["clusters"] == ["east", "west"], first.answer
    assert set(rows) == {("east", "team-a"), ("east", "team-b"), ("west", "team-a"),
                         ("west", "team-c")}, first.answer  # fmt: skip
    east_a = rows[("east", "team-a")]
    assert east_a["delivered"] == "merged" and east_a["pr"] == 1, first.answer
    assert east_a["compliant"] and east_a["before"] == "missing"
    assert live_egress(platform, "team-a") == rendered("team-a")["spec"]["egress"]  # east, live
    record = platform.proposal(east_a["proposal"])
    assert record.proposal.action.target.cluster == "east"  # the decision holds in east only

    east_b = rows[("east", "team-b")]
    assert east_b["delivered"] == "not git-managed" and not east_b["compliant"], first.answer
    assert any("never by a direct write" in why for why in east_b["why"]), east_b["why"]
    assert platform.netpols("team-b") == []
    for namespace, whose in (("team-a", f"its repository {REPO} does not"),
                             ("team-c", "no configured repository")):  # fmt: skip
        row = rows[("west", namespace)]
        assert row["delivered"] == "report-only" and not row["compliant"], first.answer
        assert row["before"] == "missing" and row["pr"] == 0 and row["proposal"] == ""
        assert any(f"{whose} sync to this cluster" in why for why in row["why"]), row["why"]
        assert netpols(west_kubectl, namespace) == []  # west untouched
    assert "apply" not in platform.called()
    assert {"east/scratch", "west/default"} <= set(first.data["uncovered"])
    assert "in clusters east, west: 1 compliant, 3 not" in first.answer
    assert "- east/team-a: compliant" in first.answer
    assert "- west/team-a: NOT compliant" in first.answer
    assert "report only, no repository" in first.answer

    # west takes the NetworkPolicy by hand, from git: west's own live state now confirms it.
    west_kubectl("apply", "-f", "-", input=git(platform.repo, "show", f"main:{PATH_A}"))
    looked = across(platform, "ask", "which namespaces are not compliant with the egress policy?")
    seen = by_cluster(looked.data)
    assert looked.task == "compliance", looked.answer
    assert seen[("west", "team-a")]["compliant"] and seen[("east", "team-a")]["compliant"]
    assert not seen[("west", "team-c")]["compliant"] and not seen[("east", "team-b")]["compliant"]
    assert not {"propose", "apply", "propose_change"} & set(platform.called())  # only looked

    # Someone widens west's: it is reported as west's drift and left as it is.
    widened = [*rendered("team-a")["spec"]["egress"], WIDE]
    west_kubectl("patch", "networkpolicy", "egress-team-egress", "-n", "team-a", "--type=merge",
                 "-p", json.dumps({"spec": {"egress": widened}}))  # fmt: skip
    again = by_cluster(across(platform, "propagate").data)
    west_a = again[("west", "team-a")]
    assert west_a["before"] == "differs" and west_a["delivered"] == "report-only"
    assert not west_a["compliant"] and any("spec.egress" in why for why in west_a["why"])
    [live] = netpols(west_kubectl, "team-a")
    assert live["spec"]["egress"][-1]["to"] == WIDE["to"]
    assert again[("east", "team-a")]["delivered"] == "nothing to do"
    assert "propose_change" not in platform.called()
