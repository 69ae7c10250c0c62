"""What every agent's conversation is opened with: its role, skills, toolbox and durable state.

Each agent's `conversation()` opens `agent_parts(AGENT, servers, ...)` and builds its own graph
`Context` (an `AgentContext` with the agent's own fields added) from the parts, so the front
doors and the tests open any agent the same way. An agent error raised inside the MCP sessions'
task groups comes out as itself, not wrapped in an exception group, wherever in the conversation
it was raised. The durable state opens first, so a database that does not answer
(`$KUBECREW_DATABASE_URL`) is one AgentError saying where, before any tool server starts.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from agents.runtime.brain import Planner
from agents.runtime.errors import AgentError, first_agent_error
from agents.runtime.persistence import Durable, agent_home, open_durable
from agents.runtime.roles import Role, load_role
from agents.runtime.skills import Skill, skills_for
from agents.runtime.toolbox import OnCall, Servers, Toolbox, open_toolbox
from core.errors import ToolError


@dataclass(frozen=True)
class AgentContext:
    """What every agent's graph runs with: its tools, its brain, its role and skills, its thread."""

    toolbox: Toolbox
    planner: Planner
    role: Role
    skills: tuple[Skill, ...]
    thread: str


@dataclass(frozen=True)
class Parts:
    role: Role
    skills: tuple[Skill, ...]
    toolbox: Toolbox
    durable: Durable


@asynccontextmanager
async def agent_parts(
    agent: str,
    servers: Servers,
    *,
    home: Path | None = None,
    on_call: OnCall | None = None,
) -> AsyncIterator[Parts]:
    role = load_role(agent)
    skills = tuple(skills_for(agent))
    try:
        async with (
            open_durable(home or agent_home(agent)) as durable,
            open_toolbox(role, servers, on_call=on_call) as toolbox,
        ):
            yield Parts(role, skills, toolbox, durable)
    except ToolError as exc:
        raise AgentError(exc.message) from exc
    except BaseExceptionGroup as group:  # the MCP sessions' task groups wrap what we raised
        found = first_agent_error(group)
        if found is None:
            raise
        raise found from group
