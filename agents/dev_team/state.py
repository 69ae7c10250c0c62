"""The Dev Team graph's state: what one conversation knows, step by step, checkpointed after each.

Everything here is plain JSON or LangChain messages, so the SQLite checkpointer stores it and a
resumed run reads back exactly what the interrupted one had.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

AGENT = "dev_team"  # the agent's name: its role, its home, its identity in the policy store


class Observation(TypedDict):
    """One tool answer, whichever brain asked for it: the evidence the answer is built from."""

    tool: str
    arguments: dict[str, Any]
    result: dict[str, Any]  # the tool's JSON answer; empty when it failed
    error: str  # the tool's error message; empty when it answered


class TargetRef(TypedDict):
    kind: str
    name: str
    namespace: str


class DevTeamState(TypedDict, total=False):
    question: str  # what the person asked, as typed
    namespace: str | None  # the caller's --namespace, if any: narrows name resolution
    intent: str  # the intent kind `understand` read ("diagnose", "unsupported")
    target: TargetRef | None  # the one object the question is about, once resolved
    clarification: str  # the question to ask back instead of investigating
    options: list[TargetRef]  # what the person may pick from, with a clarification
    skill: str  # the skill selected for the intent (its body guides the model)
    observations: Annotated[list[Observation], operator.add]  # every tool answer, in order
    seen_before: int  # observations of the thread's earlier questions: not this answer's evidence
    said_before: int  # messages of the thread's earlier questions (the model still reads them)
    messages: Annotated[list[AnyMessage], add_messages]  # the model's turns (model brain only)
    change: dict[str, Any]  # the typed change asked for (agents.runtime.changes.ops), as JSON
    pending: dict[str, Any] | None  # a destructive change asked back, until "yes" or another ask
    commanded: bool  # the person's words asked for a change (a model may then carry it out)
    model_refused: str  # a change the model asked for that this agent may not make
    answer: str  # the text shown to the person
    report: dict[str, Any]  # the same answer as data (`kubecrew ask --json`)
