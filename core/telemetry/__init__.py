"""What the crew shows of what it is doing: metrics, traces and log lines.

    metrics      the crew's Prometheus registry (`kubecrew_...`), the functions that record,
                 and its text exposition (served on the health port's /metrics)
    approvals    the policy store's waiting approvals, read at scrape time
    tracing      OpenTelemetry spans over OTLP/HTTP, on when $OTEL_EXPORTER_OTLP_ENDPOINT names
                 a collector, a no-op otherwise; never blocking the crew's work
    exporting    the exporter that counts and says a collector's failures once (SDK loaded)
    graphs       a span per LangGraph graph run and node, for every agent's graph at once
    operations   a tool call, a model turn, a policy decision: span and metrics in one block
    logs         `--log-format text|json`: the commands' "say" lines as records, with the
                 current trace

It sits in core, the lowest layer, so the MCP servers (the policy gate), the agents (toolbox,
brain, loop, desk) and the front doors (the health server, the CLI) all record into one
registry and one trace. It knows none of them: each calls in at the one place its operation
happens. LangChain's callback protocol (in `graphs`) is the only piece of the agents' world it
speaks.
"""

from core.telemetry import metrics
from core.telemetry.approvals import WaitingApprovals, watch_approvals
from core.telemetry.logs import FORMAT_ENV, LogFormat, sayer
from core.telemetry.metrics import REGISTRY, exposition, leading
from core.telemetry.operations import (
    PolicyDecision,
    Ruling,
    model_call,
    policy_decision,
    safeguard_refused,
    tool_call,
)
from core.telemetry.tracing import Tracing, annotate, current_ids, failed, span

__all__ = [
    "FORMAT_ENV",
    "REGISTRY",
    "LogFormat",
    "PolicyDecision",
    "Ruling",
    "Tracing",
    "WaitingApprovals",
    "annotate",
    "current_ids",
    "exposition",
    "failed",
    "leading",
    "metrics",
    "model_call",
    "policy_decision",
    "safeguard_refused",
    "sayer",
    "span",
    "tool_call",
    "watch_approvals",
]
