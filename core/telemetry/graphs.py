"""A span for each LangGraph graph run and each node it runs, whichever agent's graph it is.

LangGraph reports every run to LangChain callback handlers; a handler that LangChain's
`register_configure_hook` adds to every run of the process sees them all (each agent's graph,
the remediation loop, the model's reads, any subgraph) without a line in any of them. `follow`
installs it once tracing is configured; before that nothing is added, and after
`Tracing.shutdown` it ends no span and starts none.

    graph <name>    a top-level graph run (`dev_team`, `remediation-loop`, ...), child of the
                    span current where it was invoked (a desk's incident, a command)
    <node>          each node the graph runs (`learn`, `recommend`, `mutate`, ...), nested in
                    its graph's span or, for a subgraph, in the node that runs it

A node's span is current while the node runs (the tool calls, model turns and policy decisions
it causes are its children): the handler runs inline, in the node's own task, just before
LangGraph copies the context the node runs in. Routers, channel writes and other inner
runnables get no span. LangChain is the only thing here known of the agents' world: the
handler reads the callback's names and tags (`graph:step:N` marks a node), never a state.
"""

from __future__ import annotations

import contextvars
import threading
from contextvars import Token
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.tracers.context import register_configure_hook
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.util.types import AttributeValue

NODE_TAG = "graph:step:"


class GraphSpans(BaseCallbackHandler):
    run_inline = True  # in the node's task, so the span it starts is current for the node
    ignore_llm = True  # model turns have their own spans (brain)
    ignore_chat_model = True
    ignore_retriever = True
    ignore_agent = True
    ignore_retry = True
    ignore_custom_event = True

    def __init__(self) -> None:
        self.tracer: trace.Tracer | None = None
        self._open: dict[UUID, tuple[trace.Span, Token[Context] | None]] = {}  # span, token
        self._parents: dict[UUID, UUID | None] = {}  # every chain run -> its parent run
        self._lock = threading.Lock()

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        tracer = self.tracer
        if tracer is None:
            return
        name = str(kwargs.get("name") or "")
        node = (metadata or {}).get("langgraph_node")
        with self._lock:
            self._parents[run_id] = parent_run_id
            parent = self._spanned(parent_run_id)
        if parent_run_id is None:
            attributes: dict[str, AttributeValue] = {"langgraph.graph.name": name}
            self._start(tracer, f"graph {name}", attributes, run_id, parent, current=False)
        elif node == name and any(t.startswith(NODE_TAG) for t in tags or ()):
            step = (metadata or {}).get("langgraph_step")
            attributes = {"langgraph.node": name, "langgraph.step": int(step or 0)}
            self._start(tracer, name, attributes, run_id, parent, current=True)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id, None)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id, error)

    def _spanned(self, run: UUID | None) -> trace.Span | None:
        """The span of `run` or of its nearest ancestor that has one."""
        while run is not None:
            opened = self._open.get(run)
            if opened is not None:
                return opened[0]
            run = self._parents.get(run)
        return None

    def _start(
        self,
        tracer: trace.Tracer,
        name: str,
        attributes: dict[str, AttributeValue],
        run_id: UUID,
        parent: trace.Span | None,
        *,
        current: bool,
    ) -> None:
        where = trace.set_span_in_context(parent) if parent is not None else None
        span = tracer.start_span(name, context=where, attributes=attributes)
        token = otel_context.attach(trace.set_span_in_context(span)) if current else None
        with self._lock:
            self._open[run_id] = (span, token)

    def _end(self, run_id: UUID, error: BaseException | None) -> None:
        with self._lock:
            self._parents.pop(run_id, None)
            opened = self._open.pop(run_id, None)
        if opened is None:
            return
        span, token = opened
        if token is not None:
            otel_context.detach(token)
        if error is not None and not _interrupt(error):
            span.set_attribute("error.type", type(error).__qualname__)
            span.set_status(trace.Status(trace.StatusCode.ERROR, str(error)[:500] or None))
        span.end()


def _interrupt(error: BaseException) -> bool:
    """LangGraph's interrupt (a run stopping for a person) is how a node waits, not a failure."""
    return type(error).__name__ in ("GraphInterrupt", "NodeInterrupt", "ParentCommand")


HANDLER = GraphSpans()
_installed = False


def follow(tracer: trace.Tracer | None) -> None:
    """Span every graph run of the process with `tracer` (None: stop)."""
    global _installed
    HANDLER.tracer = tracer
    if tracer is not None and not _installed:
        # A ContextVar whose default is the handler: every run in every thread and task sees it.
        var = contextvars.ContextVar[GraphSpans | None]("kubecrew_graph_spans", default=HANDLER)
        register_configure_hook(var, inheritable=True)
        _installed = True
