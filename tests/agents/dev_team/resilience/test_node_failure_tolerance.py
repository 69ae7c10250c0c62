""" "Make web survive a node failure" asked in a conversation: the Dev Team finds what web lacks
on the live cluster (one replica, no spread over nodes, no PodDisruptionBudget), proposes it to
the policy store, opens one PR that edits web's manifest and adds the budget beside it, merges
it because policy allowed it, syncs after a dry run, and validates from live state: two pods on
two nodes and a budget that allows one disruption. Asked again, nothing is missing and nothing
changes. A workload that is not in git is not changed, and the answer says why."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
import yaml

from agents.dev_team.conversation import conversation
from agents.runtime.brain import Deterministic
from agents.runtime.contract import Outcome
from mcp_servers.gitops.providers.local import LocalProvider
from mcp_servers.gitops.repo import Repository
from sandbox.server import Sandbox
from tests.support.kubectl import Kubectl
from tests.support.team import Team, make_team

LONER = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: loner, namespace: shop}
spec:
  replicas: 1
  selector: {matchLabels: {app: loner}}
  template:
    metadata: {labels: {app: loner}}
    spec: {containers: [{name: loner, image: "nginx:1.27"}]}
"""


@pytest.fixture
def team(sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path) -> Team:
    return make_team(sandbox, kubectl, tmp_path)


def ask(team: Team, question: str) -> Outcome:
    async def go() -> Outcome:
        async with conversation(team.servers, Deterministic(), home=team.home) as talk:
            return await talk.ask(question)

    return anyio.run(go)


def test_one_pr_adds_replicas_spread_and_a_budget_and_the_cluster_proves_it(team: Team) -> None:
    done = ask(team, "make web survive a node failure in shop")

    assert done.data["outcome"] == "hardened", done.answer
    assert done.data["missing"] == ["2 replicas", "a spread over nodes", "a PodDisruptionBudget"]
    assert "pods on 2 nodes" in done.answer
    assert "PodDisruptionBudget web allows 1 disruption" in done.answer

    repo = Repository(team.repo, author_name="test", author_email="test@shop")
    [pr] = LocalProvider(repo, team.repo.parent / "prs").list_prs(state="all")
    assert pr.state == "merged" and pr.labels == ["kubecrew-resilience"]
    assert sorted(pr.files) == ["apps/shop/web-pdb.yaml", "apps/shop/web.yaml"]
    web = next(d for d in yaml.safe_load_all(repo.read("main", "apps/shop/web.yaml")) if d)
    assert web["spec"]["replicas"] == 2
    [spread] = web["spec"]["template"]["spec"]["topologySpreadConstraints"]
    assert spread["topologyKey"] == "kubernetes.io/hostname"
    live = team.kubectl.json("get", "pdb", "web", "-n", "shop")
    assert live["spec"]["maxUnavailable"] == 1

    again = ask(team, "harden web in shop")
    assert again.data["outcome"] == "unchanged", again.answer
    assert len(LocalProvider(repo, team.repo.parent / "prs").list_prs(state="all")) == 1


def test_a_workload_outside_git_is_not_changed(team: Team) -> None:
    team.kubectl("apply", "-f", "-", input=LONER)

    done = ask(team, "make loner tolerate node failures in shop")

    assert done.data["outcome"] == "refused", done.answer
    assert "no manifest in the team repository defines it" in done.answer
    live = team.kubectl.json("get", "deployment", "loner", "-n", "shop")
    assert live["spec"]["replicas"] == 1


def test_asked_whether_it_says_what_is_missing_and_writes_nothing(team: Team) -> None:
    before = team.kubectl.json("get", "deployment", "web", "-n", "shop")

    done = ask(team, "should web in shop have a pdb?")

    assert done.data["outcome"] == "recommended", done.answer
    assert "a PodDisruptionBudget" in done.answer and "Nothing changed" in done.answer
    repo = Repository(team.repo, author_name="test", author_email="test@shop")
    assert LocalProvider(repo, team.repo.parent / "prs").list_prs(state="all") == []
    after = team.kubectl.json("get", "deployment", "web", "-n", "shop")
    assert after["metadata"]["generation"] == before["metadata"]["generation"]
    assert team.kubectl.json("get", "pdb", "-n", "shop")["items"] == []
