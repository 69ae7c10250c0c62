"""Running the loop graph on one thread: compiled with the agent's checkpointer and store, so a
run stopped by a crash, an interrupt or a pending approval resumes where it stopped.

`heal_run` starts a run for a target (or, target None, resumes the thread); `resume` wakes a
run waiting at the `approval` node, which then claims the request's end from the policy store
(the value itself is not trusted as an answer). Resuming a finished thread does nothing.
`on_node` hears each node that ran, `on_progress` what a long node waits for meanwhile (the
graph's custom stream: `agents.runtime.progress`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command

from agents.runtime.loop.graph import LoopContext, builder
from agents.runtime.loop.state import Attempt, LoopState, Target
from agents.runtime.persistence import Durable
from agents.runtime.progress import OnProgress, Progress


@dataclass(frozen=True)
class LoopResult:
    thread: str
    outcome: str  # "fixed", "healthy", "escalated"; empty while the run is not finished
    summary: str
    attempts: list[Attempt]
    waiting_for: str  # the approval request id the run waits for, or empty
    finished: bool
    nodes: list[str] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)
    asked: str = ""  # while waiting: who may answer the request, by when, and how
    escalation: str = ""  # when escalated: why (state.Escalation); never a pending request


async def heal_run(
    target: Target | None,
    *,
    context: LoopContext,
    durable: Durable,
    incident: str | None = None,
    resume: Any = None,
    on_node: Callable[[str], None] | None = None,
    on_progress: OnProgress | None = None,
) -> LoopResult:
    graph = builder.compile(
        checkpointer=durable.checkpointer, store=durable.store, name="remediation-loop"
    )
    config: RunnableConfig = {"configurable": {"thread_id": context.thread}}
    payload: Any
    if resume is not None:
        payload = Command(resume=resume)
    elif target is not None:
        payload = {"target": target, "incident": incident or "", "attempts": []}
    else:
        payload = None
        if not (
            await graph.aget_state(config)
        ).values:  # a thread that never ran: nothing to resume
            return LoopResult(context.thread, "", "", [], "", finished=False)
    nodes: list[str] = []
    # durability="sync": a step's checkpoint is on disk before the next step starts, so a crash
    # in mutate never loses the proposal or the key the step before it wrote down.
    async for mode, chunk in graph.astream(
        payload, config, context=context, stream_mode=["updates", "custom"], durability="sync"
    ):
        if mode == "custom":
            if on_progress is not None and isinstance(chunk, Progress):
                on_progress(chunk)
            continue
        for node in chunk:
            if not node.startswith("__"):
                nodes.append(node)
                if on_node is not None:
                    on_node(node)
    snapshot = await graph.aget_state(config)
    values = cast(LoopState, snapshot.values)
    return LoopResult(
        thread=context.thread,
        outcome=values.get("outcome", "") if not snapshot.next else "",
        summary=values.get("summary", ""),
        attempts=list(values.get("attempts", [])),
        waiting_for=values.get("approval", "") if snapshot.next else "",
        finished=not snapshot.next,
        nodes=nodes,
        state=dict(values),
        asked=values.get("asked", "") if snapshot.next else "",
        escalation=values.get("escalation", "") if not snapshot.next else "",
    )
