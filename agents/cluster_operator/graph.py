"""The Cluster Operator graph: understand -> (patrol | capacity | nodes | drain_preview |
savings | clarify) -> END.

- understand: a procedure run (`patrol`, `capacity`) arrives with its task set; a question is read
  into one of three ("which nodes are unhealthy?", "what would draining node X do?", "where can
  we save cost?"), anything else becomes a clarifying answer.
- patrol: the unhealthy nodes (`nodes`), and each one taken as far as it may go now
  (`migration.migrate`); capacity: the underused workloads proposed and, as decided, applied
  (`capacity`). Both write only through gated tools carrying approved proposals.
- nodes / drain_preview / savings: the same readings, answered without changing anything.

Tools, brain and role travel in the run's `Context`; the state holds only JSON, checkpointed
per thread, and the in-flight intents live in the store (`runtime.store`), so a later patrol on
another thread carries on what an earlier one started. This slice runs the deterministic brain
only; a model brain plugs in as the Dev Team's does (investigate <-> act) in a later slice.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, cast

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from agents.cluster_operator import capacity, migration, nodes, report
from agents.cluster_operator.state import OperatorState, Task
from agents.runtime.brain import Planner
from agents.runtime.errors import AgentError
from agents.runtime.persistence import Durable
from agents.runtime.roles import Role
from agents.runtime.skills import Skill
from agents.runtime.toolbox import Toolbox

AGENT = "cluster_operator"
UNSUPPORTED = (
    "I look after nodes and capacity. Ask me 'which nodes are unhealthy?', 'what would "
    "draining node node-1 do?' or 'where can we save cost?'."
)
_DRAIN = re.compile(r"\bdrain(?:ing)?\s+(?:node\s+)?([a-z0-9][a-z0-9.-]*)", re.IGNORECASE)
_NODES = re.compile(r"\bnodes?\b", re.IGNORECASE)
_HEALTH = re.compile(r"\b(unhealthy|healthy|broken|failing|sick|down|health)\b", re.IGNORECASE)
_SAVE = re.compile(r"\b(save|saving|savings|cost|costs|cheaper|underused|waste)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Context:
    toolbox: Toolbox
    planner: Planner
    role: Role
    skills: tuple[Skill, ...]
    thread: str
    counters: Literal["accept", "refuse"] = "accept"  # how capacity proposals take counters


def read_question(question: str) -> tuple[Task, str]:
    """The kind of question, and the node a drain question names."""
    drain = _DRAIN.search(question)
    if drain and drain.group(1).lower() not in ("node", "nodes", "it"):
        return "drain-preview", drain.group(1)
    if _NODES.search(question) and _HEALTH.search(question):
        return "nodes", ""
    if _SAVE.search(question):
        return "savings", ""
    return "unsupported", ""


async def understand(state: OperatorState) -> dict[str, Any]:
    if state.get("task") in ("patrol", "capacity"):
        return {}
    task, node = read_question(state.get("question", ""))
    return {"task": task, "node": node}


def route(state: OperatorState) -> Literal[
    "patrol", "capacity", "nodes", "drain_preview", "savings", "clarify"
]:  # fmt: skip
    task = state.get("task", "unsupported")
    return "clarify" if task == "unsupported" else cast(Any, task.replace("-", "_"))


async def patrol(state: OperatorState, runtime: Runtime[Context]) -> dict[str, Any]:
    toolbox, store = runtime.context.toolbox, _store(runtime)
    issues = await nodes.unhealthy(toolbox)
    moved = [await migration.migrate(toolbox, store, issue) for issue in issues]
    result = {"nodes": issues, "migrations": moved}
    return {"result": result, "answer": report.patrol(issues, moved)}


async def capacity_review(state: OperatorState, runtime: Runtime[Context]) -> dict[str, Any]:
    toolbox, store = runtime.context.toolbox, _store(runtime)
    found = await capacity.underused(toolbox)
    done = [
        await capacity.propose_and_apply(toolbox, store, s, counters=runtime.context.counters)
        for s in found
    ]
    return {"result": {"savings": done}, "answer": report.savings(done, proposed=True)}


async def list_nodes(state: OperatorState, runtime: Runtime[Context]) -> dict[str, Any]:
    issues = await nodes.unhealthy(runtime.context.toolbox)
    return {"result": {"nodes": issues}, "answer": report.patrol(issues, [])}


async def drain_preview(state: OperatorState, runtime: Runtime[Context]) -> dict[str, Any]:
    plan = await runtime.context.toolbox.call("drain_plan", node=state["node"])
    return {"result": {"plan": plan}, "answer": report.drain_preview(plan)}


async def savings(state: OperatorState, runtime: Runtime[Context]) -> dict[str, Any]:
    found = await capacity.underused(runtime.context.toolbox)
    return {"result": {"savings": found}, "answer": report.savings(found, proposed=False)}


async def clarify(state: OperatorState) -> dict[str, Any]:
    return {"result": {}, "answer": UNSUPPORTED}


def _store(runtime: Runtime[Context]) -> BaseStore:
    if runtime.store is None:
        raise AgentError("the Cluster Operator needs its store (open_durable) to remember intents")
    return runtime.store


builder = StateGraph(OperatorState, context_schema=Context)
builder.add_node("understand", understand)
builder.add_node("patrol", patrol)
builder.add_node("capacity", capacity_review)
builder.add_node("nodes", list_nodes)
builder.add_node("drain_preview", drain_preview)
builder.add_node("savings", savings)
builder.add_node("clarify", clarify)
builder.add_edge(START, "understand")
builder.add_conditional_edges("understand", route)
for _name in ("patrol", "capacity", "nodes", "drain_preview", "savings", "clarify"):
    builder.add_edge(_name, END)


def compile_graph(durable: Durable) -> CompiledStateGraph[OperatorState, Context, Any, Any]:
    return builder.compile(checkpointer=durable.checkpointer, store=durable.store, name=AGENT)


@dataclass(frozen=True)
class Outcome:
    thread: str
    task: str
    answer: str
    result: dict[str, Any]


async def run(
    payload: OperatorState,
    *,
    context: Context,
    durable: Durable,
    on_node: Callable[[str], None] | None = None,
) -> Outcome:
    """One request on the context's thread: a procedure (task set) or a question."""
    graph = compile_graph(durable)
    config: RunnableConfig = {"configurable": {"thread_id": context.thread}}
    fresh: OperatorState = {"task": "unsupported", "question": "", "node": "", **payload}
    async for update in graph.astream(fresh, config, context=context, stream_mode="updates"):
        for node in update:
            if on_node is not None and not node.startswith("__"):
                on_node(node)
    values = cast(OperatorState, (await graph.aget_state(config)).values)
    return Outcome(
        thread=context.thread,
        task=values.get("task", ""),
        answer=values.get("answer", ""),
        result=values.get("result", {}),
    )
