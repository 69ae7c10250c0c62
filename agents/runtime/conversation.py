"""One run loop for every agent: a conversation on one compiled graph and one thread.

`GraphConversation` streams the graph's updates (telling `on_node` each node that ran) and its
custom stream, subgraphs' included (telling `on_progress` what a long step waits for meanwhile:
`agents.runtime.progress`; a heal's loop runs as a subgraph), reads the thread's state once at
the end, and builds the contract's `Outcome`: what an interrupted run waits
for is read from the interrupts the remediation loop raises (`{"approval": id, "asked": ...}`),
in the graph or any subgraph. An agent says only what is its own: how a question becomes the
graph's input (`asked`; by default the question over the agent's `defaults`, every field a run
reads, so nothing lingers from the thread's last request) and how the final state reads as an
outcome (`read`; by default `answer`, `result` as the data, and `task`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Generic, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import StateSnapshot

from agents.runtime.contract import OnNode, Outcome, Waiting
from agents.runtime.errors import AgentError
from agents.runtime.progress import OnProgress, Progress
from agents.runtime.toolbox import Toolbox
from agents.runtime.wiring import AgentContext

Graph = CompiledStateGraph[Any, Any, Any, Any]
C = TypeVar("C", bound=AgentContext)


class GraphConversation(Generic[C]):
    """A conversation whose requests run `graph` on `context.thread`, with `context` as the
    graph's runtime context."""

    defaults: ClassVar[Mapping[str, Any]] = {}
    procedures: ClassVar[tuple[str, ...]] = ()  # the tasks `perform` runs (schedules call them)

    def __init__(self, graph: Graph, context: C) -> None:
        self.graph = graph
        self.context = context

    @property
    def toolbox(self) -> Toolbox:
        return self.context.toolbox

    @property
    def thread(self) -> str:
        return self.context.thread

    def request(self, **fields: Any) -> dict[str, Any]:
        """A request's input: the agent's defaults with `fields` set."""
        return {**self.defaults, **fields}

    def asked(self, question: str, namespace: str | None) -> Mapping[str, Any]:
        """The graph's input for a question."""
        return self.request(question=question)

    def read(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The Outcome's answer, data, task, clarifying and target, from the final state."""
        return {
            "answer": values.get("answer", ""),
            "data": values.get("result", {}),
            "task": values.get("task", ""),
        }

    async def ask(
        self,
        question: str,
        *,
        namespace: str | None = None,
        on_node: OnNode | None = None,
        on_progress: OnProgress | None = None,
        interrupt_after: list[str] | None = None,
    ) -> Outcome:
        payload = self.asked(question, namespace)
        return await self.run(
            payload, on_node=on_node, on_progress=on_progress, interrupt_after=interrupt_after
        )

    async def perform(self, task: str, *, on_node: OnNode | None = None, **fields: Any) -> Outcome:
        """One of the agent's procedures by its task name (`patrol`, `audit`, ...)."""
        if task not in self.procedures:
            known = ", ".join(self.procedures) or "none"
            raise AgentError(f"no procedure {task!r} here; this agent's procedures: {known}")
        return await self.run(self.request(task=task, **fields), on_node=on_node)

    async def resume(
        self, *, on_node: OnNode | None = None, on_progress: OnProgress | None = None
    ) -> Outcome:
        """Carry on from the thread's last checkpoint (after a crash or an interrupt)."""
        return await self.run(None, on_node=on_node, on_progress=on_progress)

    async def run(
        self,
        payload: Mapping[str, Any] | None,
        *,
        on_node: OnNode | None = None,
        on_progress: OnProgress | None = None,
        interrupt_after: list[str] | None = None,
    ) -> Outcome:
        """One request on the thread (payload None: resume it)."""
        config = self._config()
        nodes: list[str] = []
        async for namespace, mode, chunk in self.graph.astream(
            payload,
            config,
            context=self.context,
            stream_mode=["updates", "custom"],
            subgraphs=True,  # a subgraph's progress (the heal loop's) is this request's too
            interrupt_after=interrupt_after,
        ):
            if mode == "custom":
                if on_progress is not None and isinstance(chunk, Progress):
                    on_progress(chunk)
                continue
            if namespace:  # a subgraph's own steps: its node in this graph stands for them
                continue
            for node in chunk:
                if node.startswith("__"):
                    continue
                nodes.append(node)
                if on_node is not None:
                    on_node(node)
        snapshot = await self.graph.aget_state(config, subgraphs=True)
        finished = not snapshot.next
        return Outcome(
            thread=self.thread,
            **self.read(snapshot.values),
            waiting=None if finished else _waiting(snapshot),
            finished=finished,
            nodes=nodes,
        )

    def _config(self) -> RunnableConfig:
        return {"configurable": {"thread_id": self.thread}}


def _waiting(snapshot: StateSnapshot) -> Waiting | None:
    for interrupt in snapshot.interrupts:
        value = interrupt.value
        if isinstance(value, dict) and value.get("approval"):
            return Waiting(str(value["approval"]), str(value.get("asked", "")))
    return None
