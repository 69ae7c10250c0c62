"""An image typo merged to the team's GitOps repository and synced heals itself with no person:
the loop learns (the Dev Team's investigation), picks the image of the last good revision
(ranked, reason shown), asks the policy store (via pull request: allowed, so merged
automatically), opens and merges the PR, syncs after a dry run, and validates on the cluster's
clock (rollout, pods Ready and unrestarted for the soak, finding gone). Afterwards the PR, the
sync, the audit records and the memory record all exist."""

from __future__ import annotations

import anyio

from agents.dev_team.conversation import conversation
from agents.runtime.brain import Deterministic
from agents.runtime.contract import Outcome
from agents.runtime.loop.ranking import past_outcomes
from agents.runtime.memory import fingerprint
from agents.runtime.persistence import open_durable
from mcp_servers.gitops.providers.local import LocalProvider
from mcp_servers.gitops.repo import Repository
from sandbox.server import Sandbox
from tests.agents.loop.conftest import WEB, Team
from tests.mcp.kube.test_diagnosis import Doctor

TYPO = "nginx:1.27-alpinee"


def break_web(team: Team, sandbox: Sandbox) -> None:
    team.commit("web: move to alpine", TYPO)
    team.sync()
    Doctor(sandbox).finding("ImagePullBackOff", namespace="shop", kind="deployment", name="web")


def test_an_image_typo_synced_from_git_is_healed_by_a_merged_pr_and_validated(
    team: Team, sandbox: Sandbox
) -> None:
    break_web(team, sandbox)

    result = team.heal("web")

    assert result.outcome == "fixed", result.summary
    assert result.nodes == ["learn", "recommend", "plan", "decide", "mutate", "validate", "done"]
    [attempt] = result.attempts
    assert attempt["fix"] == "set image of container web to nginx:1.27"
    assert attempt["verdict"] == "held"
    assert "every pod Ready and unrestarted for 20 s of cluster time" in attempt["evidence"]
    assert "diagnose no longer finds ImagePullBackOff" in attempt["evidence"]
    assert "ranked by confidence 0.75" in result.summary
    assert team.image() == "nginx:1.27"

    # The PR: merged, changing exactly the image line of the manifest, comments kept.
    repo = Repository(team.repo, author_name="test", author_email="test@shop")
    provider = LocalProvider(repo, team.repo.parent / "prs")
    [pr] = provider.list_prs(state="all")
    assert pr.state == "merged" and pr.labels == ["kubecrew-heal"]
    assert pr.reviews[0].author == "dev_team" and "policy approved" in pr.reviews[0].body
    head = repo.read("main", WEB)
    assert "image: nginx:1.27" in head and TYPO not in head, head
    # The sync: the live object carries the repository's label and the healed image.
    assert attempt["applied"] is not None
    assert any(note.startswith("synced ") for note in attempt["applied"]["notes"])

    # The audit: the policy store's proposal, evaluation and decision for the PR.
    records = team.audit()
    proposal = attempt["applied"]["proposal"]
    mine = [r for r in records if r.subject == proposal]
    assert {r.kind for r in mine} >= {"proposal", "decision"}
    assert any("via a pull request" in r.summary for r in mine)

    # The memory: the fix held for this fingerprint.
    async def remembered() -> list[str]:
        async with open_durable(team.home) as durable:
            past = await past_outcomes(
                durable.store,
                "dev_team",
                fingerprint("ImagePullBackOff", "Deployment", "shop", "web"),
            )
            return [f"{p.fix}: {p.outcome}" for p in past]

    assert anyio.run(remembered) == ["set image of container web to nginx:1.27: fixed"]

    again = team.heal("web")  # healthy now: nothing to do, nothing changed
    assert again.outcome == "healthy" and again.nodes == ["learn", "done"]
    assert len(provider.list_prs(state="all")) == 1


def test_fix_web_asked_in_a_conversation_runs_the_same_loop(team: Team, sandbox: Sandbox) -> None:
    break_web(team, sandbox)

    async def ask() -> Outcome:
        async with conversation(team.servers, Deterministic(), home=team.home) as talk:
            return await talk.ask("please fix web in shop")

    outcome = anyio.run(ask)
    assert outcome.nodes == ["understand", "heal"]
    assert outcome.data["outcome"] == "fixed", outcome.answer
    assert outcome.answer.startswith("Healed Deployment web in shop:")
    assert "merged PR #1" in outcome.answer
    assert team.image() == "nginx:1.27"
