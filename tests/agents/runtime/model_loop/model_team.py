"""The loop tests' `Team` (tests/support/team.py) with a model planning every heal.

`ModelTeam.heal` gives each run a fresh scripted model (the script's factory: each run of a real
model starts from its prompt) unless the test passes a planner, and keeps the models and the
tool calls, so the deterministic tests' own checks run unchanged against model-planned runs:
the scenarios are the same, only the planner differs. `model_team` turns a team into one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from agents.runtime.brain import ModelPlanner, Planner
from agents.runtime.loop.run import LoopResult
from agents.runtime.scripted import ScriptedChatModel
from tests.agents.runtime.model_loop.scripts import investigator
from tests.support.team import Team


@dataclass
class ModelTeam(Team):
    script: Callable[[], ScriptedChatModel] = investigator
    models: list[ScriptedChatModel] = field(default_factory=list)
    called: list[str] = field(default_factory=list)  # every tool call of every heal, in order

    def heal(
        self,
        target: str = "web",
        *,
        planner: Planner | None = None,
        thread: str | None = None,
        **extra: Any,
    ) -> LoopResult:
        if planner is None:
            self.models.append(self.script())
            planner = ModelPlanner(self.models[-1])
        extra.setdefault("on_call", lambda tool, arguments: self.called.append(tool))
        return super().heal(target, planner=planner, thread=thread, **extra)


def model_team(team: Team) -> ModelTeam:
    return ModelTeam(**{f.name: getattr(team, f.name) for f in fields(Team)})
