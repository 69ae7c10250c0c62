"""Fixtures of the agent tests, and the guard that keeps every real model out of them.

`KUBECREW_MODEL_GUARD=1` is set for the whole session: building a model from the environment
raises, and the model brain accepts only the scripted model (agents/runtime/scripted.py), so
no test can reach a provider whatever KUBECREW_MODEL says. `ask` runs one question through a
Dev Team conversation on a sandbox, with its own agent home (checkpoints and memory).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from agents.dev_team.conversation import Conversation, conversation
from agents.runtime.brain import GUARD_ENV, MODEL_ENV, Deterministic, Planner
from agents.runtime.contract import Outcome
from agents.runtime.toolbox import Servers
from mcp_servers.kube.settings import KubeSettings
from sandbox.server import Sandbox


@pytest.fixture(autouse=True, scope="session")
def model_guard() -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in (GUARD_ENV, MODEL_ENV)}
    os.environ[GUARD_ENV] = "1"
    os.environ.pop(MODEL_ENV, None)
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


class Agent:
    """The Dev Team agent on one cluster: one conversation per question unless a thread is
    given, each with the tool calls it made kept for the test to read."""

    def __init__(self, kubeconfig: Path, home: Path) -> None:
        self.servers = Servers(kube=KubeSettings(kubeconfig=kubeconfig))
        self.home = home
        self.last: Conversation | None = None

    def ask(
        self,
        question: str,
        *,
        planner: Planner | None = None,
        thread: str | None = None,
        namespace: str | None = None,
        interrupt_after: list[str] | None = None,
    ) -> Outcome:
        async def go() -> Outcome:
            async with conversation(
                self.servers, planner or Deterministic(), home=self.home, thread=thread
            ) as talk:
                self.last = talk
                return await talk.ask(
                    question, namespace=namespace, interrupt_after=interrupt_after
                )

        return anyio.run(go)

    def resume(self, thread: str) -> Outcome:
        async def go() -> Outcome:
            async with conversation(
                self.servers, Deterministic(), home=self.home, thread=thread
            ) as talk:
                self.last = talk
                return await talk.resume()

        return anyio.run(go)

    def called(self) -> list[str]:
        assert self.last is not None
        return [c.tool for c in self.last.toolbox.calls]


@pytest.fixture
def agent(sandbox: Sandbox, tmp_path: Path) -> Agent:
    return Agent(sandbox.kubeconfig, tmp_path / "agent-home")
