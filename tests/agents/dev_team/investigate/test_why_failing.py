""" "Why is web failing?" names the real cause with evidence, for an image typo, a crash loop
from a bad command, an OOM kill and a failing probe: asked in five phrasings with the
deterministic brain, and once with the scripted model planning the same tools in the same graph.

Each test breaks a fresh sandbox's Deployment `web` as people do (tests/support/broken_web.py),
waits until the kube server's `diagnose` sees it (the cluster is alive: kills and back-offs take
their time), then asks.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from agents.runtime.brain import ModelPlanner
from agents.runtime.scripted import ScriptedChatModel, calls
from sandbox.server import Sandbox
from tests.support.broken_web import (
    Fault,
    assert_names_the_cause,
    bad_command,
    failing_probe,
    image_typo,
    oom,
)
from tests.support.dev_team import Agent
from tests.support.diagnosis import NS, Doctor
from tests.support.kubectl import Kubectl

PHRASINGS = [
    "why is web failing?",
    "What's wrong with my web service",
    "web keeps crashing, why?",
    "is web broken?",
    "diagnose web in shop",
]
READS = {"list_resources", "diagnose", "recommend", "events", "logs", "rollout_history"}


FAULTS = [
    pytest.param(image_typo, id="image-typo"),
    pytest.param(bad_command, id="bad-command"),
    pytest.param(oom, id="oom-killed"),
    pytest.param(failing_probe, id="failing-probe"),
]


def diagnosis_in(messages: list[BaseMessage]) -> dict[str, Any]:
    """The diagnose result the model was shown, as a ToolMessage (its text is the JSON)."""
    shown = [m for m in messages if isinstance(m, ToolMessage) and m.name == "diagnose"]
    assert shown, "the model never saw the diagnose result"
    content = shown[-1].content
    text = content if isinstance(content, str) else "".join(b["text"] for b in content)  # type: ignore[index]
    return dict(json.loads(text))


def script() -> ScriptedChatModel:
    """A model that diagnoses, then reads the logs of the pod the top finding shows on and the
    rollout history, then says what it read."""
    scope = {"namespace": NS, "kind": "deployment", "name": "web"}

    def follow_up(messages: list[BaseMessage]) -> AIMessage:
        related = [r for f in diagnosis_in(messages)["findings"] for r in f["related"]]
        pod = next(r["name"] for r in related if r["kind"] == "Pod")
        logs = {"pod": pod, "namespace": NS, "tail": 20}
        return calls(("logs", logs), ("rollout_history", {"name": "web", "namespace": NS}))

    def conclude(messages: list[BaseMessage]) -> AIMessage:
        codes = [f["code"] for f in diagnosis_in(messages)["findings"]]
        return AIMessage(f"the diagnosis names {', '.join(codes)}")

    return ScriptedChatModel(
        turns=[calls(("diagnose", scope), ("recommend", scope)), follow_up, conclude]
    )


@pytest.mark.parametrize("breaks", FAULTS)
def test_why_is_web_failing_names_the_real_cause_with_evidence_whoever_plans(
    sandbox: Sandbox, kubectl: Kubectl, agent: Agent, breaks: Any
) -> None:
    kubectl("create", "namespace", NS)
    fault: Fault = breaks(kubectl)
    Doctor(sandbox).finding(fault.code, namespace=NS, kind="deployment", name="web")

    for question in PHRASINGS:
        outcome = agent.ask(question)
        assert outcome.target == {"kind": "Deployment", "name": "web", "namespace": NS}, question
        assert_names_the_cause(outcome.answer, fault)
        assert fault.fix in outcome.answer.partition("Recommended fix:")[2], outcome.answer
        assert outcome.data["cause"]["code"] == fault.code
        assert set(agent.called()) <= READS
        assert "What I could not see:" not in outcome.answer, outcome.answer  # the logs too

    model = script()
    outcome = agent.ask("why is web failing?", planner=ModelPlanner(model))
    assert outcome.nodes == ["understand", "investigate", "answer"]
    assert len(model.seen) == 3  # three turns: two with reads, then the answer
    assert_names_the_cause(outcome.answer, fault)
    reading = outcome.answer.partition("The model's reading: the diagnosis names ")[2]
    assert fault.code in reading.splitlines()[0], outcome.answer
    assert agent.called()[3:] == ["diagnose", "recommend", "logs", "rollout_history"]
    assert "diagnose" in model.offered and "delete" not in model.offered
