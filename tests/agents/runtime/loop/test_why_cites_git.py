"""Asked why a git-managed workload is failing, the Dev Team cites the commit that changed its
manifest before the trouble (`manifest_history`): the change, its author and its words."""

from __future__ import annotations

import anyio

from agents.dev_team.conversation import conversation
from agents.runtime.brain import Deterministic
from agents.runtime.contract import Outcome
from sandbox.server import Sandbox
from tests.support.heals import TYPO, break_web
from tests.support.team import Team


def test_the_answer_names_the_commit_that_broke_web(team: Team, sandbox: Sandbox) -> None:
    break_web(team, sandbox)

    async def ask() -> Outcome:
        async with conversation(team.servers, Deterministic(), home=team.home) as talk:
            return await talk.ask("why is web failing in shop?")

    answer = anyio.run(ask).answer
    section = answer.partition("Recent changes in git")[2]
    assert "by dev: web: move to alpine (apps/shop/web.yaml)" in section, answer
    assert f"+          image: {TYPO}" in section, answer
    assert "What I could not see:" not in answer, answer
