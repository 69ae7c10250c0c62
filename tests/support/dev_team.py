"""The Dev Team agent on one cluster, as its tests ask it: `Agent.ask` runs one question through a
Dev Team conversation (one per question unless a thread is given) with its own agent home
(checkpoints and memory), and keeps the tool calls it made for the test to read.
"""

from __future__ import annotations

from pathlib import Path

import anyio

from agents.dev_team.conversation import Conversation, conversation
from agents.runtime.brain import Deterministic, Planner
from agents.runtime.contract import Outcome
from agents.runtime.toolbox import Servers
from mcp_servers.kube.settings import KubeSettings


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
