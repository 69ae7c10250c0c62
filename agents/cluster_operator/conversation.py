"""One conversation with the Cluster Operator, wired: tools, brain, role, skills, durable state.

The agent contract's conversation (`agents.runtime.contract`), so the front doors open it as any
agent's; its procedures: `patrol()` (the watch helper schedules it), `capacity()` (a capacity
review), `fleet()` (every cluster in `clusters`, kubeconfig contexts of the kube server) and
`ask(question)` for "which nodes are unhealthy?", "what would draining node X do?", "where can
we save cost?", "plan maintenance of node-3 for a kernel upgrade", "are the nodes ready?", "are
we ready to upgrade to 1.38?".
The planner is the brain: `Deterministic`, or a `ModelPlanner` whose model plans each
procedure's reads before the procedure decides and acts (graph.py, agents/runtime/modelsteps.py).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, ClassVar, Literal

from agents.cluster_operator.graph import AGENT, Context, compile_graph
from agents.runtime.brain import Planner
from agents.runtime.contract import Agent, OnNode, Outcome
from agents.runtime.conversation import GraphConversation
from agents.runtime.toolbox import OnCall, Servers
from agents.runtime.wiring import agent_parts


class Conversation(GraphConversation[Context]):
    defaults: ClassVar[Mapping[str, Any]] = {
        "task": "unsupported", "question": "", "node": "", "reason": "",
    }  # fmt: skip
    procedures = ("patrol", "capacity", "fleet")

    def read(self, values: Mapping[str, Any]) -> dict[str, Any]:
        result = values.get("result") or {}
        return {**super().read(values), "clarifying": bool(result.get("clarification"))}

    async def patrol(self, *, on_node: OnNode | None = None) -> Outcome:
        return await self.perform("patrol", on_node=on_node)

    async def capacity(self, *, on_node: OnNode | None = None) -> Outcome:
        return await self.perform("capacity", on_node=on_node)

    async def fleet(self, *, on_node: OnNode | None = None) -> Outcome:
        return await self.perform("fleet", on_node=on_node)


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
            counters=counters, clusters=clusters or _fleet(servers), git_home=_git_home(servers),
        )  # fmt: skip
        yield Conversation(compile_graph(parts.durable), context)


def _fleet(servers: Servers) -> tuple[str, ...]:
    """The clusters the crew's kube server looks after (the crew file's `clusters`)."""
    return servers.kube.fleet if servers.kube is not None else ()


def _git_home(servers: Servers) -> str | None:
    """The context the crew's GitOps repository syncs to ("" for the default one; None: none)."""
    return None if servers.gitops is None else servers.gitops.context or ""


entry = Agent(name=AGENT, open=conversation)
