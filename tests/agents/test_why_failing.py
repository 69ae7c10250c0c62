""" "Why is web failing?" names the real cause with evidence, for an image typo, a crash loop
from a bad command, an OOM kill and a failing probe: asked in five phrasings with the
deterministic brain, and once with the scripted model planning the same tools in the same graph.

Each test breaks a fresh sandbox's Deployment `web` as people do, waits until the kube server's
`diagnose` sees it (the cluster is alive: kills and back-offs take their time), then asks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from agents.runtime.brain import ModelPlanner
from agents.runtime.scripted import ScriptedChatModel, calls
from sandbox.server import Sandbox
from tests.agents.conftest import Agent
from tests.mcp.kube.test_diagnosis import NS, Doctor, deployment, rollout
from tests.support.kubectl import Kubectl

PHRASINGS = [
    "why is web failing?",
    "What's wrong with my web service",
    "web keeps crashing, why?",
    "is web broken?",
    "diagnose web in shop",
]
READS = {"list_resources", "diagnose", "recommend", "events", "logs", "rollout_history"}


@dataclass(frozen=True)
class Fault:
    code: str
    cause: str  # words of the first line: the real cause
    evidence: tuple[str, ...]  # what the answer must cite
    fix: str  # what the recommended fix's step says (read afresh: the deterministic brain
    # asks again when a live pod's snapshot showed no fix, the script does not)


def image_typo(shop: Kubectl) -> Fault:
    shop("apply", "-f", "-", input=deployment("web", {"image": "nginx:1.27"}))
    rollout(shop, "web")
    shop("set", "image", "deployment/web", "main=nginx:1.27-alpinee", "-n", NS)
    return Fault(
        "ImagePullBackOff",
        "cannot pull image 'nginx:1.27-alpinee'",
        (
            "event (event Failed on Pod web-",
            "nginx:1.27-alpinee: not found",
            "revision 2 (current): nginx:1.27-alpinee",
            "revision 1: nginx:1.27",
        ),
        '"image": "nginx:1.27"',  # the last good image back
    )


def bad_command(shop: Kubectl) -> Fault:
    command = ["sh", "-c", "echo config is broken; exit 3"]
    shop("apply", "-f", "-", input=deployment("web", {"image": "busybox:1.36", "command": command}))
    return Fault(
        "CrashLoopBackOff",
        "keeps exiting (code 3)",
        ('(application output, data only): "config is broken"', "last exit: code 3"),
        "",  # no fix: only the program's owner knows the right command
    )


def oom(shop: Kubectl) -> Fault:
    container = {
        "image": "ghcr.io/kubecrew/leaky-app:1.0.0",
        "resources": {"requests": {"memory": "64Mi"}, "limits": {"memory": "100Mi"}},
    }
    profile = {"sandbox.kubecrew.io/profile": "leaky"}
    shop("apply", "-f", "-", input=deployment("web", container, annotations=profile))
    return Fault(
        "OOMKilled",
        "more memory than its limit (100Mi)",
        ("reason OOMKilled, exit code 137", "memory grows while it runs"),
        '"150Mi"',
    )


def failing_probe(shop: Kubectl) -> Fault:
    container = {
        "image": "nginx:1.27",
        "ports": [{"containerPort": 80}],
        "readinessProbe": {"httpGet": {"path": "/", "port": 8081}, "periodSeconds": 2},
    }
    shop("apply", "-f", "-", input=deployment("web", container))
    return Fault(
        "ProbeFailing",
        "port 8081 is not a container port",
        ("event (event Unhealthy on Pod web-", "Readiness probe failed"),
        '"port": 80',
    )


FAULTS = [
    pytest.param(image_typo, id="image-typo"),
    pytest.param(bad_command, id="bad-command"),
    pytest.param(oom, id="oom-killed"),
    pytest.param(failing_probe, id="failing-probe"),
]


def assert_names_the_cause(answer: str, fault: Fault) -> None:
    first = answer.splitlines()[0]
    assert first.startswith("Deployment web in shop is failing:"), answer
    assert fault.cause in first, answer
    for cited in fault.evidence:
        assert cited in answer, f"{cited!r} not cited in:\n{answer}"
    assert "I changed nothing" in answer


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
    assert outcome.nodes == ["understand", *["investigate", "act"] * 2, "investigate", "answer"]
    assert_names_the_cause(outcome.answer, fault)
    reading = outcome.answer.partition("The model's reading: the diagnosis names ")[2]
    assert fault.code in reading.splitlines()[0], outcome.answer
    assert agent.called()[3:] == ["diagnose", "recommend", "logs", "rollout_history"]
    assert "diagnose" in model.offered and "delete" not in model.offered
