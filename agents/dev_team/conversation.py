"""One conversation with the Dev Team agent, wired: tools, brain, role, skills, durable state.

The front doors (`kubecrew ask`, Slack and the terminal chat) and the tests open a
conversation the same way, so what a test proves is what a person gets.

A "fix web" whose remediation loop stops for a person's approval leaves the thread interrupted;
`waiting()` says what it waits for (the request id and who may answer, from the loop's
interrupt), and `resume()` carries it on once the request has ended: the loop's approval node
then claims the answer from the policy store, once, as this thread.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from langchain_core.runnables import RunnableConfig

from agents.dev_team.graph import AGENT, Context, Outcome, compile_graph, run
from agents.runtime.brain import Planner
from agents.runtime.persistence import Durable
from agents.runtime.toolbox import OnCall, Servers, Toolbox
from agents.runtime.wiring import agent_parts


@dataclass(frozen=True)
class Waiting:
    """What an interrupted thread waits for."""

    request: str  # the approval request id (a-...)
    asked: str  # who may answer it, by when, and how


class Conversation:
    def __init__(self, context: Context, durable: Durable) -> None:
        self.context = context
        self.durable = durable

    @property
    def toolbox(self) -> Toolbox:
        return self.context.toolbox

    async def ask(
        self,
        question: str,
        *,
        namespace: str | None = None,
        on_node: Callable[[str], None] | None = None,
        interrupt_after: list[str] | None = None,
    ) -> Outcome:
        return await run(
            question,
            context=self.context,
            durable=self.durable,
            namespace=namespace,
            on_node=on_node,
            interrupt_after=interrupt_after,
        )

    async def resume(self, *, on_node: Callable[[str], None] | None = None) -> Outcome:
        """Carry on from the thread's last checkpoint (after a crash or an interrupt)."""
        return await run(None, context=self.context, durable=self.durable, on_node=on_node)

    async def waiting(self) -> Waiting | None:
        """The approval request the thread's remediation loop waits for, if it waits for one."""
        graph = compile_graph(self.durable)
        config: RunnableConfig = {"configurable": {"thread_id": self.context.thread}}
        snapshot = await graph.aget_state(config, subgraphs=True)
        for interrupt in snapshot.interrupts:
            value = interrupt.value
            if isinstance(value, dict) and value.get("approval"):
                return Waiting(str(value["approval"]), str(value.get("asked", "")))
        return None


@asynccontextmanager
async def conversation(
    servers: Servers,
    planner: Planner,
    *,
    home: Path | None = None,
    thread: str | None = None,
    on_call: OnCall | None = None,
) -> AsyncIterator[Conversation]:
    async with agent_parts(AGENT, servers, home=home, on_call=on_call) as parts:
        thread_id = thread or uuid.uuid4().hex
        context = Context(parts.toolbox, planner, parts.role, parts.skills, thread_id)
        yield Conversation(context, parts.durable)
