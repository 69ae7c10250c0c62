"""An image typo synced from git heals itself with a scripted model planning `learn`: the model
lists web's pods, reads the unready one's description, events and logs, and says what it read;
the loop then asks `diagnose` and `recommend` afresh, so the PR, the policy decision, the sync,
the validation and the memory record are exactly those of the deterministic run. The
deterministic test's own checks run here unchanged (tests/support/heals.py), planner aside.
"""

from __future__ import annotations

import anyio
from langchain_core.messages import ToolMessage

from agents.dev_team.conversation import conversation
from agents.runtime.brain import ModelPlanner
from agents.runtime.contract import Outcome
from agents.runtime.scripted import shown
from sandbox.server import Sandbox
from tests.agents.runtime.model_loop.model_team import ModelTeam
from tests.agents.runtime.model_loop.scripts import investigator
from tests.support.heals import (
    PULL_FAILING,
    TYPO,
    an_image_typo_synced_from_git_is_healed_by_a_merged_pr_and_validated,
    break_web,
)

READS = {"list_resources", "describe", "events", "logs"}


def test_an_image_typo_heals_by_the_same_pr_sync_and_validation_when_a_model_plans(
    team: ModelTeam, sandbox: Sandbox
) -> None:
    an_image_typo_synced_from_git_is_healed_by_a_merged_pr_and_validated(team, sandbox)

    first, again = team.models  # the healing run, then the run that found web healthy
    seen = first.seen[-1]
    described = shown(seen, "describe")["summary"]
    assert described["name"].startswith("web-")
    assert described["status"] in PULL_FAILING  # which one depends on the kubelet's back-off
    events = str(shown(seen, "events"))
    assert TYPO in events, events
    answered = [m for m in seen if isinstance(m, ToolMessage)]
    assert {m.name for m in answered} == READS and all(m.status != "error" for m in answered)
    assert team.called.index("logs") < team.called.index("diagnose")  # the model read first
    assert set(first.offered) >= READS
    assert not {"set_image", "merge_pr", "propose_change", "sync"} & set(first.offered)
    assert len(again.seen) == 2  # every pod ready: the model answered after one look
    assert all(p["ready"] == "1/1" for p in shown(again.seen[-1], "list_resources")["items"])


def test_fix_web_asked_in_a_conversation_heals_it_with_the_model_planning(
    team: ModelTeam, sandbox: Sandbox
) -> None:
    break_web(team, sandbox)
    model = investigator()

    async def ask() -> Outcome:
        async with conversation(team.servers, ModelPlanner(model), home=team.home) as talk:
            return await talk.ask("please fix web in shop")

    outcome = anyio.run(ask)
    assert outcome.nodes == ["understand", "heal"]
    assert outcome.data["outcome"] == "fixed", outcome.answer
    assert outcome.answer.startswith("Healed Deployment web in shop:")
    assert "merged PR #1" in outcome.answer
    assert team.image() == "nginx:1.27"
    assert len(model.seen) == 3  # list, then describe/events/logs, then its reading
