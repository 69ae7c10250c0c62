"""A crash loop from a bad command, an OOM kill and a failing readiness probe, each merged to the
team's GitOps repository and synced: "why is web failing?" asked with a scripted model following
the diagnose-workload skill names the real cause with its evidence and changes nothing; then a
heal planned by a scripted model heals each as the deterministic loop does: the memory limit,
the probe's port, or the last good revision's containers written back to the manifest, by a
merged PR, validated.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from agents.dev_team.conversation import conversation
from agents.runtime.brain import ModelPlanner
from agents.runtime.contract import Outcome
from sandbox.server import Sandbox
from tests.agents.runtime.model_loop.model_team import ModelTeam
from tests.agents.runtime.model_loop.scripts import diagnostician
from tests.support.faults import Fault, bad_command, failing_probe, oom
from tests.support.gitops import git
from tests.support.team import WEB

FAULTS = [
    pytest.param(bad_command, id="bad-command"),
    pytest.param(oom, id="oom-killed"),
    pytest.param(failing_probe, id="failing-probe"),
]


def ask_why(team: ModelTeam) -> Outcome:
    model = diagnostician()

    async def ask() -> Outcome:
        async with conversation(team.servers, ModelPlanner(model), home=team.home) as talk:
            return await talk.ask("why is web failing?")

    outcome = anyio.run(ask)
    assert [m.name for m in model.seen[-1] if m.type == "tool"] == [
        "diagnose", "recommend", "events", "logs", "rollout_history",
    ]  # fmt: skip
    return outcome


@pytest.mark.parametrize("breaks", FAULTS)
def test_the_cause_is_named_and_the_fault_healed_or_escalated_as_without_a_model(
    team: ModelTeam, sandbox: Sandbox, breaks: Any
) -> None:
    fault: Fault = breaks(team, sandbox)
    head = git(team.repo, "rev-parse", "main")

    why = ask_why(team)
    first = why.answer.splitlines()[0]
    assert first.startswith("Deployment web in shop is failing:") and fault.cause in first, why
    assert f"The model's reading: the cause is {fault.code}" in why.answer, why.answer
    assert "I changed nothing" in why.answer and why.data["cause"]["code"] == fault.code
    assert git(team.repo, "rev-parse", "main") == head

    healed = team.heal("web")

    assert healed.outcome == "fixed", healed.summary
    [attempt] = healed.attempts
    assert attempt["fix"] == fault.fix and attempt["verdict"] == "held"
    assert f"diagnose no longer finds {fault.code}" in attempt["evidence"]
    assert "merged PR #1" in healed.summary
    manifest = git(team.repo, "show", f"main:{WEB}")
    assert fault.mended in manifest and fault.broken not in manifest, manifest
