"""Blueprints across two live sandboxes named as contexts of one kubeconfig (east, west).

team-a exists on both: on east it comes from the team's repository, whose gitops server syncs
to east; on west it was made by hand, with the same labels. One sync fixes east by PR and
confirms it from east's live state, while west, which no configured repository syncs to, is
reported only. Once west carries the blueprint's objects, a hand-edited quota there is
reported as west's drift, field by field, and east stays untouched.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from agents.platform.conversation import conversation
from agents.runtime.brain import Deterministic
from agents.runtime.contract import Outcome
from mcp_servers.gitops.settings import GitopsSettings
from sandbox.server import Options, Sandbox
from tests.support.clock import RATE
from tests.support.fleet import fleet_kubeconfig
from tests.support.gitops import git
from tests.support.kubectl import Kubectl
from tests.support.platform_agent import BLUEPRINT, CLASS, REPO, Platform

PATH = "platform/blueprints/team-a.yaml"


@pytest.fixture
def west(tmp_path: Path) -> Iterator[Sandbox]:
    with Sandbox(Options(home=tmp_path / "west", nodes=1, rate=RATE)) as running:
        yield running


def sync(platform: Platform, call: str = "sync_blueprints", *args: Any) -> Outcome:
    """One fleet conversation: both clusters, the team repository syncing to east."""

    async def go() -> Outcome:
        async with conversation(
            platform.servers(), Deterministic(), repos={REPO: platform.gitops},
            home=platform.home, clusters=("east", "west"),
        ) as talk:  # fmt: skip
            outcome: Outcome = await getattr(talk, call)(*args)
            return outcome

    return anyio.run(go)


def rows(outcome: Outcome) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["cluster"], r["namespace"]): r for r in outcome.data["namespaces"]}


def hard(kubectl: Kubectl) -> dict[str, str]:
    quota = kubectl.json("get", "quota", "team-namespace", "-n", "team-a")
    found: dict[str, str] = quota["spec"]["hard"]
    return found


def test_each_cluster_drifts_on_its_own_and_only_a_served_one_is_fixed(
    platform: Platform, west: Sandbox, tmp_path: Path
) -> None:
    platform.policy("blueprint", BLUEPRINT)
    west_kubectl = Kubectl(west.kubeconfig, tmp_path / "west-cache")
    west_kubectl("create", "namespace", "team-a")
    west_kubectl("label", "namespace", "team-a", f"{CLASS}=team", f"kubecrew.io/gitops-repo={REPO}")
    fleet = fleet_kubeconfig(
        tmp_path / "fleet.kubeconfig", {"east": platform.kubeconfig, "west": west.kubeconfig}
    )
    platform.kubeconfig = fleet
    platform.gitops = GitopsSettings(
        repo=platform.repo, state_dir=tmp_path / "prs", kubeconfig=fleet, context="east"
    )

    first = sync(platform)
    done = rows(first)
    assert first.data["clusters"] == ["east", "west"], first.answer
    east_a, west_a = done[("east", "team-a")], done[("west", "team-a")]
    assert east_a["delivered"] == "merged" and east_a["pr"] == 1 and east_a["in_sync"], first.answer
    assert west_a["delivered"] == "report-only" and not west_a["in_sync"], first.answer
    assert "ResourceQuota team-a/team-namespace: missing" in west_a["drift"]
    assert any("its repository team-a-gitops does not sync to this cluster" in w
               for w in west_a["why"]), west_a["why"]  # fmt: skip
    assert done[("east", "team-b")]["delivered"] == "not git-managed"
    assert "west/default" in first.data["uncovered"] and "east/scratch" in first.data["uncovered"]
    assert "west/team-a" in first.answer and "report only, no repository" in first.answer
    assert hard(platform.kubectl)["requests.cpu"] == "4"  # east, confirmed live
    assert west_kubectl("get", "quota", "-n", "team-a").strip() == ""  # west untouched

    # west takes the blueprint's objects by hand from git, then someone edits its quota.
    merged = git(platform.repo, "show", f"main:{PATH}")
    west_kubectl("apply", "-f", "-", input=merged)
    west_kubectl("patch", "quota", "team-namespace", "-n", "team-a", "--type=merge",
                 "-p", '{"spec": {"hard": {"requests.cpu": "64"}}}')  # fmt: skip

    second = sync(platform)
    again = rows(second)
    east_a, west_a = again[("east", "team-a")], again[("west", "team-a")]
    assert east_a["in_sync"] and east_a["drift"] == [] and east_a["pr"] == 0, second.answer
    assert west_a["drift"] == [
        "ResourceQuota team-a/team-namespace: spec.hard.requests.cpu: want '4', live '64'"
    ], west_a["drift"]
    assert west_a["delivered"] == "report-only" and not west_a["in_sync"] and west_a["pr"] == 0
    assert (
        hard(west_kubectl)["requests.cpu"] == "64" and hard(platform.kubectl)["requests.cpu"] == "4"
    )

    looked = sync(platform, "ask", "is team-a on the blueprint?")
    seen = rows(looked)
    assert set(seen) == {("east", "team-a"), ("west", "team-a")}, looked.answer
    assert (
        seen[("east", "team-a")]["in_sync"] and seen[("west", "team-a")]["delivered"] == "reported"
    )
