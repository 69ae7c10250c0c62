"""One conversation with the Cluster Operator, wired: tools, brain, role, skills, durable state.

The same shape as the Dev Team's (`agents.dev_team.conversation`), so the front doors open either
the same way: `patrol()` (the watch helper schedules it), `capacity()` (a capacity review),
`fleet()` (every cluster in `clusters`, kubeconfig contexts of the kube server) and
`ask(question)` for "which nodes are unhealthy?", "what would draining node X do?", "where can
we save cost?", "plan maintenance of node-3 for a kernel upgrade", "are the nodes ready?".
The planner is the brain: `Deterministic`, or a `ModelPlanner` whose model plans each
procedure's reads before the procedure decides and acts (graph.py, agents/runtime/modelsteps.py).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Literal

from agents.cluster_operator.graph import AGENT, Context, Outcome, run
from agents.runtime.brain import Planner
from agents.runtime.persistence import Durable
from agents.runtime.toolbox import OnCall, Servers, Toolbox
from agents.runtime.wiring import agent_parts

OnNode = Callable[[str], None]


class Conversation:
    def __init__(self, context: Context, durable: Durable) -> None:
        self.context = context
        self.durable = durable

    @property
    def toolbox(self) -> Toolbox:
        return self.context.toolbox

    async def patrol(self, *, on_node: OnNode | None = None) -> Outcome:
        return await run(
            {"task": "patrol"}, context=self.context, durable=self.durable, on_node=on_node
        )

    async def capacity(self, *, on_node: OnNode | None = None) -> Outcome:
        return await run(
            {"task": "capacity"}, context=self.context, durable=self.durable, on_node=on_node
        )

    async def fleet(self, *, on_node: OnNode | None = None) -> Outcome:
        return await run(
            {"task": "fleet"}, context=self.context, durable=self.durable, on_node=on_node
        )

    async def ask(self, question: str, *, on_node: OnNode | None = None) -> Outcome:
        return await run(
            {"question": question}, context=self.context, durable=self.durable, on_node=on_node
        )


@asynccontextmanager
async def conversation(
    servers: Servers,
    planner: Planner,
    *,
    home: Path | None = None,
    thread: str | None = None,
    on_call: OnCall | None = None,
    counters: Literal["accept", "refuse"] = "accept",
    clusters: tuple[str, ...] = (),
) -> AsyncIterator[Conversation]:
    async with agent_parts(AGENT, servers, home=home, on_call=on_call) as parts:
        context = Context(
            parts.toolbox, planner, parts.role, parts.skills, thread or uuid.uuid4().hex,
            counters=counters, clusters=clusters,
        )  # fmt: skip
        yield Conversation(context, parts.durable)
