"""The Cluster Operator's and the Platform agent's test worlds (tests/support/cluster_operator.py
and tests/support/platform_agent.py) with a scripted model planning every conversation.

`ModelOperator` and `ModelPlatform` are those tests' `Operator` and `Platform`, whose every
conversation gets a fresh model from `script` (the script's factory: each run of a real model
starts from its prompt) and keeps it in `models`, so the deterministic tests' own checks run
unchanged against model-planned runs: the world and the checks are the same, only the brain
differs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import anyio

from agents.cluster_operator.conversation import conversation as operator_conversation
from agents.platform.conversation import conversation as platform_conversation
from agents.runtime.brain import MAX_STEPS, ModelPlanner
from agents.runtime.contract import Outcome as OperatorOutcome
from agents.runtime.contract import Outcome as PlatformOutcome
from agents.runtime.scripted import ScriptedChatModel
from sandbox.server import Sandbox
from tests.support.cluster_operator import Operator
from tests.support.kubectl import Kubectl
from tests.support.platform_agent import REPO, Platform

Script = Callable[[], ScriptedChatModel]


class ModelOperator(Operator):
    def __init__(self, sandbox: Sandbox, root: Path, script: Script) -> None:
        super().__init__(sandbox, root)
        self.script = script
        self.models: list[ScriptedChatModel] = []
        self.max_steps = MAX_STEPS

    def _run(
        self,
        call: str,
        *args: Any,
        counters: Literal["accept", "refuse"],
        thread: str | None = None,
    ) -> OperatorOutcome:
        self.models.append(self.script())
        planner = ModelPlanner(self.models[-1], max_steps=self.max_steps)

        async def go() -> OperatorOutcome:
            async with operator_conversation(
                self.servers(), planner, home=self.home, counters=counters, thread=thread
            ) as talk:
                self.last = talk
                outcome: OperatorOutcome = await getattr(talk, call)(*args)
                return outcome

        return anyio.run(go)


class ModelPlatform(Platform):
    def __init__(self, sandbox: Sandbox, kubectl: Kubectl, root: Path, script: Script) -> None:
        super().__init__(sandbox, kubectl, root)
        self.script = script
        self.models: list[ScriptedChatModel] = []

    def _run(self, call: str, *args: Any, thread: str | None = None) -> PlatformOutcome:
        self.models.append(self.script())
        planner = ModelPlanner(self.models[-1])

        async def go() -> PlatformOutcome:
            async with platform_conversation(
                self.servers(), planner, repos={REPO: self.gitops}, home=self.home, thread=thread
            ) as talk:
                self.last = talk
                outcome: PlatformOutcome = await getattr(talk, call)(*args)
                return outcome

        return anyio.run(go)
