"""One conversation with the Dev Team agent, wired: tools, brain, role, skills, durable state.

The front doors (`kubecrew ask`, Slack and the terminal chat) and the tests open a
conversation the same way, so what a test proves is what a person gets.

A "fix web" whose remediation loop stops for a person's approval leaves the thread interrupted;
the outcome's `waiting` says what it waits for (the request id and who may answer, from the
loop's interrupt), and `resume()` carries it on once the request has ended: the loop's approval
node then claims the answer from the policy store, once, as this thread.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, ClassVar

from agents.dev_team.graph import Context, compile_graph
from agents.dev_team.state import AGENT
from agents.runtime.brain import Planner
from agents.runtime.contract import Agent
from agents.runtime.conversation import GraphConversation
from agents.runtime.toolbox import OnCall, Servers
from agents.runtime.wiring import agent_parts


class Conversation(GraphConversation[Context]):
    # What one question sets; a thread's next question starts from these, not from the last
    # answer's clarification, target or model turns.
    defaults: ClassVar[Mapping[str, Any]] = {
        "intent": "", "target": None, "clarification": "", "options": [], "skill": "",
        "change": {}, "commanded": False, "model_refused": "", "answer": "", "report": {},
    }  # fmt: skip

    def asked(self, question: str, namespace: str | None) -> Mapping[str, Any]:
        return self.request(question=question, namespace=namespace)

    def read(self, values: Mapping[str, Any]) -> dict[str, Any]:
        target = values.get("target")
        return {
            "answer": values.get("answer", ""),
            "data": values.get("report", {}),
            "task": values.get("intent", ""),
            "clarifying": bool(values.get("clarification")),
            "target": dict(target) if target else None,
        }


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
        yield Conversation(compile_graph(parts.durable), context)


entry = Agent(name=AGENT, open=conversation)
