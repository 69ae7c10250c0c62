"""The crew's Prometheus metrics: one registry of the crew's own, every name `kubecrew_...`.

    kubecrew_incidents_opened_total{source}               incidents opened (news, or back)
    kubecrew_incidents_handled_total{agent,result}        handlings ended: healed, open,
                                                          waiting (for a person), failed
    kubecrew_heals_total{agent,outcome,reason}            remediation runs ended: fixed,
                                                          healthy, escalated (reason: why)
    kubecrew_fix_attempts_total{agent,channel,verdict}    fixes tried: held, failed, refused
    kubecrew_policy_decisions_total{agent,action,decision,by,dry_run}
                                                          policy's verdicts: allow, deny, ask
                                                          (a person decides), by the kube
                                                          gate or a proposal's negotiation
    kubecrew_safeguard_refusals_total{safeguard}          calls a safeguard stopped
    kubecrew_tool_calls_total{server,tool,outcome}        MCP tool calls: ok, error, refused
    kubecrew_tool_call_duration_seconds{server,tool}      their latency (histogram)
    kubecrew_model_calls_total{agent,model,outcome}       chat model turns: ok, error
    kubecrew_model_call_duration_seconds{agent,model}     their latency (histogram)
    kubecrew_model_tokens_total{agent,model,type}         tokens used: input, output
    kubecrew_leader{lease}                                1 while this process holds the lease
    kubecrew_trace_export_failures_total                  span batches the collector refused
                                                          or never received
    kubecrew_approvals_waiting, ..._oldest_wait_seconds   at scrape time, from the policy store
                                                          (`approvals`, registered by the part
                                                          that watches them)

The registry is the crew's, not prometheus_client's global default, so what a part exposes is
exactly this list (no process or GC collectors of the library's choosing, no duplicates when a
test builds a second part in the same process). `exposition` renders it for `/metrics`
(kubecrew.health serves it). Recording is one call of a function below, at the one place the
thing happens (the desk, the loop, the gate, the toolbox, the brain); this module knows none of
them. Label values are short fixed words or names the crew chose (agents, servers, tools,
actions, leases), never free text: each distinct value is a series kept forever.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

REGISTRY = CollectorRegistry(auto_describe=True)
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
MODEL_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0)

INCIDENTS_OPENED = Counter(
    "kubecrew_incidents_opened",
    "Incidents opened by the watcher's desk (new, or back after being resolved), by the "
    "source of the signal that opened them.",
    ["source"],
    registry=REGISTRY,
)
INCIDENTS_HANDLED = Counter(
    "kubecrew_incidents_handled",
    "Handlings of an incident that ended, by the agent that handled it and how: healed (the "
    "handler fixed and validated it), open (escalated or only diagnosed), waiting (for a "
    "person's approval), failed (the handler broke).",
    ["agent", "result"],
    registry=REGISTRY,
)
HEALS = Counter(
    "kubecrew_heals",
    "Remediation loop runs that ended, by agent and outcome (fixed, healthy, escalated); "
    "reason says why an escalated run ended with a person (refused, denied, no-fix, unusable, "
    "failed), empty otherwise.",
    ["agent", "outcome", "reason"],
    registry=REGISTRY,
)
FIX_ATTEMPTS = Counter(
    "kubecrew_fix_attempts",
    "Fixes the remediation loop tried, by agent, channel (gitops, direct) and verdict: held "
    "(validated), failed (validation failed, rolled back), refused (policy or a gate said no).",
    ["agent", "channel", "verdict"],
    registry=REGISTRY,
)
POLICY_DECISIONS = Counter(
    "kubecrew_policy_decisions",
    "Policy verdicts per policy action: allow, deny (rejected, countered, deferred), ask (a "
    "person must approve); by the kube server's gate on a write call (dry_run true for the "
    "verdict a server-side dry run carries back) or by the negotiation of a proposal.",
    ["agent", "action", "decision", "by", "dry_run"],
    registry=REGISTRY,
)
SAFEGUARD_REFUSALS = Counter(
    "kubecrew_safeguard_refusals",
    "Calls a safeguard stopped before they did anything: policy_gate (a write the kube gate "
    "refused), allow_list (a tool outside the agent's role), model_write (a write a model "
    "planned), loop_delete (a delete the remediation loop will not make).",
    ["safeguard"],
    registry=REGISTRY,
)
TOOL_CALLS = Counter(
    "kubecrew_tool_calls",
    "MCP tool calls the agents made, by server, tool and outcome (ok, error, refused).",
    ["server", "tool", "outcome"],
    registry=REGISTRY,
)
TOOL_SECONDS = Histogram(
    "kubecrew_tool_call_duration_seconds",
    "How long the agents' MCP tool calls took, answer or error, by server and tool.",
    ["server", "tool"],
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)
MODEL_CALLS = Counter(
    "kubecrew_model_calls",
    "Chat model turns, by agent, model and outcome (ok, error).",
    ["agent", "model", "outcome"],
    registry=REGISTRY,
)
MODEL_SECONDS = Histogram(
    "kubecrew_model_call_duration_seconds",
    "How long chat model turns took, by agent and model.",
    ["agent", "model"],
    buckets=MODEL_BUCKETS,
    registry=REGISTRY,
)
MODEL_TOKENS = Counter(
    "kubecrew_model_tokens",
    "Tokens the chat models used, by agent, model and type (input, output), as the provider "
    "reported them.",
    ["agent", "model", "type"],
    registry=REGISTRY,
)
LEADER = Gauge(
    "kubecrew_leader",
    "1 while this process holds the lease (the crew's leader election), else 0.",
    ["lease"],
    registry=REGISTRY,
)
TRACE_EXPORT_FAILURES = Counter(
    "kubecrew_trace_export_failures",
    "Span batches that could not be exported to the OTLP endpoint (down, refusing, timing "
    "out); the crew carries on without them.",
    registry=REGISTRY,
)


def exposition() -> tuple[bytes, str]:
    """The registry in the Prometheus text format, and its Content-Type."""
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST


def leading(lease: str, held: bool) -> None:
    """Say whether this process holds `lease` now (the leader election calls it on change)."""
    LEADER.labels(lease=lease).set(1 if held else 0)


def incident_opened(source: str) -> None:
    INCIDENTS_OPENED.labels(source=source).inc()


def incident_handled(agent: str, result: str) -> None:
    INCIDENTS_HANDLED.labels(agent=agent or "unknown", result=result).inc()


def heal_ended(agent: str, outcome: str, reason: str = "") -> None:
    HEALS.labels(agent=agent, outcome=outcome, reason=reason).inc()


def fix_tried(agent: str, channel: str, verdict: str) -> None:
    FIX_ATTEMPTS.labels(agent=agent, channel=channel, verdict=verdict).inc()


def policy_decided(agent: str, action: str, decision: str, *, by: str, dry_run: bool) -> None:
    POLICY_DECISIONS.labels(
        agent=agent or "unknown",
        action=action,
        decision=decision,
        by=by,
        dry_run=str(dry_run).lower(),
    ).inc()


def safeguard_refused(safeguard: str) -> None:
    SAFEGUARD_REFUSALS.labels(safeguard=safeguard).inc()


def tool_called(server: str, tool: str, outcome: str, seconds: float) -> None:
    TOOL_CALLS.labels(server=server, tool=tool, outcome=outcome).inc()
    TOOL_SECONDS.labels(server=server, tool=tool).observe(seconds)


def model_called(
    agent: str, model: str, outcome: str, seconds: float, *, input_tokens: int, output_tokens: int
) -> None:
    MODEL_CALLS.labels(agent=agent, model=model, outcome=outcome).inc()
    MODEL_SECONDS.labels(agent=agent, model=model).observe(seconds)
    if input_tokens:
        MODEL_TOKENS.labels(agent=agent, model=model, type="input").inc(input_tokens)
    if output_tokens:
        MODEL_TOKENS.labels(agent=agent, model=model, type="output").inc(output_tokens)


def trace_export_failed() -> None:
    TRACE_EXPORT_FAILURES.inc()
