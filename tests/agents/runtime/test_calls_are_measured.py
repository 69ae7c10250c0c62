"""Every call an agent makes is measured where it passes (core.telemetry): the Dev Team's tool
calls through its toolbox to the kube server on a sandbox, the kube gate's verdicts on them,
a model turn of the scripted model, and the safeguards that stop a call: counted in the crew's
registry and, with a collector, one span each by the GenAI conventions."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolCall

from agents.runtime.brain import ModelPlanner, act
from agents.runtime.errors import ToolFailed
from agents.runtime.roles import load_role
from agents.runtime.scripted import ScriptedChatModel
from agents.runtime.toolbox import Servers, open_toolbox
from core.telemetry import tracing
from mcp_servers.kube.settings import KubeSettings
from sandbox.server import Sandbox
from tests.support.counts import Counts
from tests.support.kubectl import Kubectl
from tests.support.otlp import ReceivedSpan, receiving
from tests.support.policies import POLICIES
from tests.support.shop import WEB


def test_tool_calls_policy_verdicts_model_turns_and_refusals_are_counted_and_traced(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    kubectl("apply", "-f", "-", input=WEB)
    kubectl("scale", "deploy/web", "-n", "shop", "--replicas=5")
    kube = KubeSettings(kubeconfig=sandbox.kubeconfig, policies=(POLICIES,),
                        policy_store=str(tmp_path / "store.sqlite"), agent="dev_team")  # fmt: skip
    usage = {"input_tokens": 120, "output_tokens": 7, "total_tokens": 127}
    model = ScriptedChatModel(turns=[AIMessage("web is fine", usage_metadata=usage)])
    counts = Counts()

    async def work() -> None:
        async with open_toolbox(load_role("dev_team"), Servers(kube=kube)) as toolbox:
            await toolbox.call("scale", name="web", namespace="shop", replicas=1, dry_run=True)
            with pytest.raises(ToolFailed, match="Counter-offer: replicas=3"):
                await toolbox.call("scale", name="web", namespace="shop", replicas=1)
            await toolbox.call("scale", name="web", namespace="shop", replicas=3)
            refused = await toolbox.run(ToolCall(name="drain", args={}, id="c-1"))
            assert refused.status == "error"
            reply = await ModelPlanner(model).think(toolbox, "you read", [HumanMessage("web?")])
            assert reply.text == "web is fine"
            planned = ToolCall(name="scale", args={"name": "web", "replicas": 9}, id="c-2")
            assert (await act(toolbox, planned)).status == "error"

    with receiving() as collector:
        traced = tracing.configure("ask", {"OTEL_EXPORTER_OTLP_ENDPOINT": collector.url})
        assert traced is not None
        try:
            anyio.run(work)
            traced.flush()
        finally:
            traced.shutdown()
        spans = collector.received()

    def decisions(decision: str, dry_run: str) -> float:
        labels = {"agent": "dev_team", "action": "scale", "by": "gate", "dry_run": dry_run}
        return counts.added("kubecrew_policy_decisions_total", decision=decision, **labels)

    assert decisions("deny", "true") == decisions("deny", "false") == 1
    assert decisions("allow", "false") == 1
    calls = "kubecrew_tool_calls_total"
    assert counts.added(calls, server="kube", tool="scale", outcome="ok") == 2
    assert counts.added(calls, server="kube", tool="scale", outcome="error") == 1
    assert counts.added(calls, server="kube", tool="-", outcome="refused") == 1  # drain: not hers
    latency = "kubecrew_tool_call_duration_seconds_count"
    assert counts.added(latency, server="kube", tool="scale") == 3
    refusals = "kubecrew_safeguard_refusals_total"
    for safeguard in ("policy_gate", "allow_list", "model_write"):
        assert counts.added(refusals, safeguard=safeguard) == 1, safeguard
    model_labels = {"agent": "dev_team", "model": "ScriptedChatModel"}
    assert counts.added("kubecrew_model_calls_total", outcome="ok", **model_labels) == 1
    tokens = "kubecrew_model_tokens_total"
    assert counts.added(tokens, type="input", **model_labels) == 120
    assert counts.added(tokens, type="output", **model_labels) == 7

    named = {s.name: s for s in spans}
    chat = named["chat ScriptedChatModel"]
    assert chat.attributes["gen_ai.operation.name"] == "chat"
    assert chat.attributes["gen_ai.request.model"] == "ScriptedChatModel"
    assert chat.attributes["gen_ai.provider.name"] == "scripted"
    assert chat.attributes["gen_ai.usage.input_tokens"] == 120
    assert chat.attributes["gen_ai.usage.output_tokens"] == 7
    scales = [s for s in spans if s.name == "execute_tool scale"]
    assert [s.status for s in scales] == [0, 2, 0]  # the refused one is an error
    assert scales[1].attributes["error.type"] == "tool_error"
    drain = named["execute_tool drain"]
    assert drain.status == 2 and "safeguard refused" in drain.events
    gate = [s for s in spans if s.name == "policy_decision scale"]
    verdicts = [(s.attributes["kubecrew.policy.decision"], s.attributes["kubecrew.policy.dry_run"])
                for s in gate]  # fmt: skip
    assert verdicts == [("deny", True), ("deny", False), ("allow", False)]
    assert _no_cluster_data(spans)


def _no_cluster_data(spans: list[ReceivedSpan]) -> bool:
    """Spans carry names and numbers: no tool arguments, answers, errors or messages."""
    text = repr([(s.attributes, s.events) for s in spans])
    return not any(said in text for said in ("web is fine", "web?", "Counter-offer", "'shop'"))
