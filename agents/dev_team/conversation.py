"""One conversation with the Dev Team agent, wired: tools, brain, role, skills, durable state.

The front doors (`kubecrew ask`, later Slack and the terminal chat) and the tests open a
conversation the same way, so what a test proves is what a person gets.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from agents.dev_team.graph import AGENT, Context, Outcome, run
from agents.runtime.brain import Planner
from agents.runtime.persistence import Durable
from agents.runtime.toolbox import OnCall, Servers, Toolbox
from agents.runtime.wiring import agent_parts


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
