"""An image typo merged to the team's GitOps repository and synced heals itself with no person:
the loop learns (the Dev Team's investigation), picks the image of the last good revision
(ranked, reason shown), asks the policy store (via pull request: allowed, so merged
automatically), opens and merges the PR, syncs after a dry run, and validates on the cluster's
clock (rollout, pods Ready and unrestarted for the soak, finding gone). Afterwards the PR, the
sync, the audit records and the memory record all exist. The scene and its checks:
tests/support/heals.py, which the model-planned twin runs too."""

from __future__ import annotations

import anyio

from agents.dev_team.conversation import conversation
from agents.runtime.brain import Deterministic
from agents.runtime.contract import Outcome
from sandbox.server import Sandbox
from tests.support.heals import (
    an_image_typo_synced_from_git_is_healed_by_a_merged_pr_and_validated,
    break_web,
)
from tests.support.team import Team


def test_an_image_typo_synced_from_git_is_healed_by_a_merged_pr_and_validated(
    team: Team, sandbox: Sandbox
) -> None:
    an_image_typo_synced_from_git_is_healed_by_a_merged_pr_and_validated(team, sandbox)


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
