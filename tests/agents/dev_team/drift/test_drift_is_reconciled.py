"""Drift of a git-managed workload, asked in a conversation with the Dev Team agent: a person's
`kubectl edit` of web's image and replicas is named field by field (git says, live says, who),
then either undone by a sync that policy approved (the default) or, when the person says it was
a hotfix, adopted into git by a merged pull request; either way no drift remains. A workload in
sync says so with the commit compared; one no manifest defines is said to be unmanaged."""

from __future__ import annotations

from typing import Any

import anyio

from agents.dev_team.conversation import conversation
from agents.runtime.brain import Deterministic
from agents.runtime.contract import Outcome
from mcp_servers.gitops.providers.local import LocalProvider
from mcp_servers.gitops.repo import Repository
from mcp_servers.gitops.settings import CREW_AUTHOR
from tests.support.drift import HOTFIX_IMAGE, IMAGE, edit_by_hand, live
from tests.support.gitops import git
from tests.support.team import WEB, Team

UNMANAGED = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: shop}
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
      - {name: api, image: nginx:1.27}
"""


def ask(team: Team, question: str) -> tuple[Outcome, list[str]]:
    async def go() -> tuple[Outcome, list[str]]:
        async with conversation(team.servers, Deterministic(), home=team.home) as talk:
            outcome = await talk.ask(question)
            return outcome, [c.tool for c in talk.toolbox.calls]

    return anyio.run(go)


def drifted_fields(outcome: Outcome) -> dict[str, dict[str, Any]]:
    return {d["path"]: d for row in outcome.data["drift"] for d in row.get("diffs", [])}


def test_a_hand_edit_is_named_field_by_field_and_undone_by_a_sync(team: Team) -> None:
    head = git(team.repo, "rev-parse", "main").strip()
    clean, _ = ask(team, "has web drifted from git?")
    assert clean.data["outcome"] == "in-sync", clean.answer
    assert clean.answer.startswith("No drift: Deployment web in shop matches git at commit")
    assert head[:12] in clean.answer and "apps/shop/web.yaml" in clean.answer

    edit_by_hand(team)
    outcome, called = ask(team, "has web drifted from git?")

    assert outcome.nodes == ["understand", "task"]
    assert outcome.data["outcome"] == "restored", outcome.answer
    fields = drifted_fields(outcome)
    assert fields[IMAGE]["git"] == "nginx:1.27" and fields[IMAGE]["live"] == HOTFIX_IMAGE
    assert fields[IMAGE]["by"] == "kubectl-edit" and fields[IMAGE]["at"]
    assert (fields["spec.replicas"]["git"], fields["spec.replicas"]["live"]) == (1, 2)
    assert f"{IMAGE}: git says nginx:1.27, live says {HOTFIX_IMAGE}" in outcome.answer
    assert "changed by kubectl-edit" in outcome.answer and head[:12] in outcome.answer
    # Policy first, a dry run before the real sync, and drift asked again to prove it.
    assert called.index("propose") < called.index("sync")
    assert called.count("sync") == 3 and called.count("drift") == 2
    assert outcome.data["verified"] is True and outcome.data["proposal"], outcome.answer
    assert "Live now matches git, field for field." in outcome.answer
    assert (team.image(), live(team)["spec"]["replicas"]) == ("nginx:1.27", 1)
    records = [r for r in team.audit() if r.subject == outcome.data["proposal"]]
    assert {r.kind for r in records} >= {"proposal", "decision"}
    assert git(team.repo, "rev-parse", "main").strip() == head  # git was not changed


def test_a_hotfix_the_person_keeps_is_adopted_into_git_by_a_merged_pr(team: Team) -> None:
    edit_by_hand(team)
    looked, called = ask(team, "has web drifted? just check, don't change anything")
    assert looked.data["outcome"] == "drifted", looked.answer
    assert "I changed nothing, as asked" in looked.answer and IMAGE in looked.answer
    assert not {"propose", "sync", "adopt_live"} & set(called)

    outcome, called = ask(team, "someone edited web by hand; keep it, it was a hotfix")

    assert outcome.data["outcome"] == "adopted", outcome.answer
    assert "adopt_live" in called and "merge_pr" in called
    assert called.index("propose") < called.index("adopt_live")
    [number] = outcome.data["prs"]
    repo = Repository(team.repo, author_name="test", author_email="test@shop")
    pr = LocalProvider(repo, team.repo.parent / "prs").get(number).pr
    assert pr.state == "merged" and pr.labels == ["adopt-live"]
    # the gitops server's own identity reviews; the body says which agent merged and why
    assert pr.reviews[0].author == CREW_AUTHOR and "policy approved" in pr.reviews[0].body
    assert "by the dev_team agent" in pr.reviews[0].body
    manifest = repo.read("main", WEB)
    assert f"image: {HOTFIX_IMAGE}  # pinned" in manifest  # the comment kept
    assert "replicas: 2  # raised for the sale" in manifest
    assert f"No drift remains at commit {outcome.data['commit_after'][:12]}" in outcome.answer
    assert (team.image(), live(team)["spec"]["replicas"]) == (HOTFIX_IMAGE, 2)  # cluster kept

    again, _ = ask(team, "has web drifted?")
    assert again.data["outcome"] == "in-sync", again.answer


def test_a_workload_no_manifest_defines_is_said_to_be_unmanaged(team: Team) -> None:
    team.kubectl.run("apply", "-f", "-", input=UNMANAGED)

    outcome, called = ask(team, "has api in shop drifted from git?")

    assert outcome.data["outcome"] == "not-managed", outcome.answer
    assert outcome.answer.startswith("Deployment api in shop is not managed from git")
    assert "sync never touches it" in outcome.answer
    assert not {"propose", "sync", "adopt_live"} & set(called)
