"""A heal traced to a real OTLP/HTTP collector (tests/support/otlp.py): the image typo of
tests/support/heals.py healed by the loop while tracing is configured as `kubecrew` configures
it from $OTEL_EXPORTER_OTLP_ENDPOINT. What reaches the wire is one trace: the Dev Team agent's
span, the loop's graph in it, a span for each node the graph ran, and the tool calls each node
made nested in their node, named and attributed by the GenAI conventions; the policy store's
decision on the fix's proposal belongs to the same trace. The fix held and the heal are
counted in the crew's metrics."""

from __future__ import annotations

from collections import Counter

from core.telemetry import tracing
from sandbox.server import Sandbox
from tests.support.counts import Counts
from tests.support.heals import break_web
from tests.support.otlp import ReceivedSpan, receiving
from tests.support.team import Team

NODES = ["learn", "recommend", "plan", "decide", "mutate", "validate", "done"]


def test_a_heal_is_one_trace_of_its_nodes_and_their_tool_calls(
    team: Team, sandbox: Sandbox
) -> None:
    break_web(team, sandbox)
    counts = Counts()
    with receiving() as collector:
        traced = tracing.configure("heal", {"OTEL_EXPORTER_OTLP_ENDPOINT": collector.url})
        assert traced is not None
        try:
            result = team.heal("web")
            traced.flush()
        finally:
            traced.shutdown()
        spans = collector.received()

    assert result.outcome == "fixed", result.summary
    fixes = "kubecrew_fix_attempts_total"
    assert counts.added(fixes, agent="dev_team", channel="gitops", verdict="held") == 1
    assert counts.added("kubecrew_heals_total", agent="dev_team", outcome="fixed", reason="") == 1
    negotiated = {"agent": "dev_team", "action": "patch", "by": "negotiation", "dry_run": "false"}
    assert counts.added("kubecrew_policy_decisions_total", decision="allow", **negotiated) == 1
    by_id = {s.span_id: s for s in spans}
    [heal] = [s for s in spans if s.name == "invoke_agent dev_team"]
    assert heal.parent_id == "" and heal.attributes["kubecrew.heal.outcome"] == "fixed"
    assert heal.resource["service.name"] == "kubecrew"
    assert heal.resource["kubecrew.command"] == "heal"
    assert {s.trace_id for s in spans} == {heal.trace_id}
    [graph] = [s for s in spans if s.name == "graph remediation-loop"]
    assert graph.parent_id == heal.span_id

    # One span per node the loop ran, in the graph's span.
    nodes = [s for s in spans if s.parent_id == graph.span_id]
    assert sorted(s.name for s in nodes) == sorted(NODES)
    [plan] = [s for s in nodes if s.name == "plan"]
    assert plan.attributes["kubecrew.fix.title"] == "set image of container web to nginx:1.27"
    [done] = [s for s in nodes if s.name == "done"]
    assert done.attributes["kubecrew.heal.outcome"] == "fixed"

    # Every tool call is an execute_tool span, in the node that made it.
    calls = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "execute_tool"]
    assert all(s.name == "execute_tool " + s.attributes["gen_ai.tool.name"] for s in calls)
    assert {s.attributes["gen_ai.agent.name"] for s in calls} == {"dev_team"}
    assert {s.attributes["kubecrew.mcp.server"] for s in calls} == {"kube", "gitops", "policy"}
    made_in = Counter((by_id[s.parent_id].name, s.attributes["gen_ai.tool.name"]) for s in calls)
    assert made_in[("learn", "diagnose")] == 1
    assert made_in[("decide", "propose")] == 1
    assert made_in[("mutate", "propose_change")] == made_in[("mutate", "merge_pr")] == 1
    assert made_in[("validate", "rollout_status")] >= 1
    assert made_in[("invoke_agent dev_team", "list_resources")] >= 1  # "web" named the target

    # The policy store's decision on the fix's proposal: allowed, in the same trace.
    [decision] = [s for s in spans if s.name == "policy_decision proposal patch"]
    assert decision.attributes["kubecrew.policy.by"] == "negotiation"
    assert decision.attributes["kubecrew.policy.decision"] == "allow"
    assert _ancestors(decision, by_id)[-1] is heal


def _ancestors(span: ReceivedSpan, by_id: dict[str, ReceivedSpan]) -> list[ReceivedSpan]:
    chain = []
    while span.parent_id in by_id:
        span = by_id[span.parent_id]
        chain.append(span)
    return chain
