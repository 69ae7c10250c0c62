"""The crew's observed operations: a tool call, a model turn, a policy decision. Each is one
context manager that times it, records its metrics and, when tracing is on, is its span, named
and attributed by OpenTelemetry's GenAI conventions where they exist:

    execute_tool <tool>       gen_ai.operation.name=execute_tool, gen_ai.tool.name,
                              gen_ai.tool.call.id, gen_ai.agent.name, kubecrew.mcp.server
    chat <model>              gen_ai.operation.name=chat, gen_ai.request.model,
                              gen_ai.provider.name, gen_ai.usage.input_tokens / output_tokens,
                              gen_ai.response.model, gen_ai.agent.name
    policy_decision <what>    kubecrew.policy.by (gate, negotiation), .subject, .actions,
                              .verdict, .decision (allow, deny, ask), .dry_run

The caller says how it went on the yielded object (`outcome`, `usage`, `decided`); an
exception leaving the block is an error outcome, recorded and passed on. Nothing here reads a
tool's arguments or a model's messages: spans carry names and numbers, never cluster data or
prompts (a Secret's value must not reach a collector).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind
from opentelemetry.util.types import AttributeValue

from core.telemetry import metrics
from core.telemetry.tracing import failed, span

Ruling = Literal["allow", "deny", "ask"]  # a policy verdict in the words of the metrics


@dataclass
class ToolCall:
    outcome: Literal["ok", "error", "refused"] = "ok"


@contextmanager
def tool_call(server: str, tool: str, *, call_id: str, agent: str) -> Iterator[ToolCall]:
    """One MCP tool call of an agent (`Toolbox.run`)."""
    call, began = ToolCall(), time.perf_counter()
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool,
        "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.type": "extension",
        "gen_ai.agent.name": agent,
        "kubecrew.mcp.server": server,
    }
    with span(f"execute_tool {tool}", attributes) as current:
        try:
            yield call
        except BaseException:
            call.outcome = "error"
            raise
        finally:
            # a refused name is whatever a model made up: the span keeps it, a label does not
            label = tool if call.outcome != "refused" else "-"
            metrics.tool_called(server, label, call.outcome, time.perf_counter() - began)
            if call.outcome != "ok":  # the error's text stays with the agent: it may quote data
                failed(current, f"tool_{call.outcome}")


@dataclass
class ModelTurn:
    input_tokens: int = 0
    output_tokens: int = 0
    response_model: str = ""

    def usage(self, input_tokens: int, output_tokens: int, *, response_model: str = "") -> None:
        self.input_tokens, self.output_tokens = input_tokens, output_tokens
        self.response_model = response_model


@contextmanager
def model_call(model: str, *, provider: str, agent: str) -> Iterator[ModelTurn]:
    """One chat model turn of an agent (`ModelPlanner.think`)."""
    turn, began, outcome = ModelTurn(), time.perf_counter(), "error"
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": model,
        "gen_ai.provider.name": provider,
        "gen_ai.agent.name": agent,
    }
    with span(f"chat {model}", attributes, kind=SpanKind.CLIENT) as current:
        try:
            yield turn
            outcome = "ok"
        finally:
            metrics.model_called(
                agent, model, outcome, time.perf_counter() - began,
                input_tokens=turn.input_tokens, output_tokens=turn.output_tokens,
            )  # fmt: skip
            _usage(current, turn)


def _usage(current: Span, turn: ModelTurn) -> None:
    if not current.is_recording():
        return
    current.set_attribute("gen_ai.usage.input_tokens", turn.input_tokens)
    current.set_attribute("gen_ai.usage.output_tokens", turn.output_tokens)
    if turn.response_model:
        current.set_attribute("gen_ai.response.model", turn.response_model)


@dataclass
class PolicyDecision:
    agent: str
    dry_run: bool
    by: str
    actions: list[str] = field(default_factory=list)
    decisions: list[Ruling] = field(default_factory=list)
    verdict: str = ""  # the gate's words for the whole call ("allow", "needs approval", ...)

    def decided(self, action: str, decision: Ruling) -> None:
        """The verdict on one of the call's policy actions (`scale`, `patch`, ...)."""
        self.actions.append(action)
        self.decisions.append(decision)
        metrics.policy_decided(self.agent, action, decision, by=self.by, dry_run=self.dry_run)


@contextmanager
def policy_decision(
    subject: str, *, agent: str, by: Literal["gate", "negotiation"], dry_run: bool = False
) -> Iterator[PolicyDecision]:
    """Policy deciding: the kube gate on one write call (`subject` the tool), or the policy
    store's negotiation of a proposal (`subject` "proposal <action>")."""
    decision = PolicyDecision(agent, dry_run, by)
    attributes: dict[str, AttributeValue] = {
        "kubecrew.policy.by": by,
        "kubecrew.policy.subject": subject,
        "kubecrew.policy.dry_run": dry_run,
        "gen_ai.agent.name": agent,
    }
    with span(f"policy_decision {subject}", attributes) as current:
        yield decision
        if current.is_recording():
            current.set_attribute("kubecrew.policy.actions", decision.actions)
            current.set_attribute("kubecrew.policy.verdict", decision.verdict)
            worst = _worst(decision.decisions)
            if worst:
                current.set_attribute("kubecrew.policy.decision", worst)


def _worst(decisions: list[Ruling]) -> str:
    for which in ("deny", "ask", "allow"):
        if which in decisions:
            return which
    return ""


def safeguard_refused(safeguard: str, why: str = "") -> None:
    """A safeguard stopped a call: counted, and an event on the current span."""
    metrics.safeguard_refused(safeguard)
    current = trace.get_current_span()
    if current.is_recording():
        current.add_event("safeguard refused", {"kubecrew.safeguard": safeguard,
                                                "kubecrew.reason": why[:300]})  # fmt: skip
