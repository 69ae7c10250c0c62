"""A model brain may propose changes, never make them: offered `request_change` beside its
reads, the change it asks for goes the one way every change goes (policy store, dry run, gated
write, validation). Asked as a command, the scripted model's scale is carried out exactly as
the grammar's; one that policy refuses is refused and nothing changes; a change it suggests in
answer to a question is shown and waits for "yes"."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage

from agents.runtime.brain import ModelPlanner
from agents.runtime.scripted import ScriptedChatModel, calls
from tests.support.changes import Crew


def request(op: str, namespace: str = "staging", **fields: Any) -> dict[str, Any]:
    target = {"kind": "Deployment", "name": "web", "namespace": namespace}
    return {"change": {"op": op, "target": target, **fields}}


def model(*turns: Any) -> ModelPlanner:
    return ModelPlanner(ScriptedChatModel(turns=list(turns)))


def test_a_commanded_scale_planned_by_a_model_is_carried_out_through_the_gates(
    crew: Crew,
) -> None:
    planner = model(
        calls(("get_resource", {"kind": "deployment", "name": "web", "namespace": "staging"})),
        calls(("request_change", request("scale", replicas=3))),
        AIMessage("web scaled to 3 as asked"),
    )
    outcome = crew.ask("scale web to three please", planner=planner)
    assert outcome.data["outcome"] == "done", outcome.answer
    assert crew.web()["spec"]["replicas"] == 3
    assert any(s.startswith("policy store approved it") for s in outcome.data["steps"])
    assert len(crew.mutations()) == 1


def test_a_model_change_that_policy_refuses_changes_nothing(crew: Crew) -> None:
    crew.deploy_web("shop")
    crew.kubectl("scale", "deploy/web", "-n", "shop", "--replicas=3")
    planner = model(calls(("request_change", request("scale", "shop", replicas=1))),
                    AIMessage("done"))  # fmt: skip
    outcome = crew.ask("scale web in shop down to 1", planner=planner)
    assert outcome.data["outcome"] == "refused", outcome.answer
    assert "CapacityPolicy shop-min-capacity" in outcome.answer
    assert crew.web("shop")["spec"]["replicas"] == 3 and crew.mutations() == []


def test_a_change_a_model_suggests_for_a_question_waits_for_yes(crew: Crew) -> None:
    scope = {"namespace": "staging", "kind": "deployment", "name": "web"}
    planner = model(
        calls(("diagnose", scope), ("request_change", request("restart"))),
        AIMessage("nothing is wrong; a restart would not hurt"),
    )
    asked = crew.ask("why is web slow?", planner=planner, thread="q")
    assert "The model suggests: restart the pods of Deployment web" in asked.answer
    assert asked.data["confirm"]["op"] == "restart" and crew.mutations() == []
    restarted = crew.web()["spec"]["template"]["metadata"].get("annotations") or {}
    assert "kubectl.kubernetes.io/restartedAt" not in restarted

    done = crew.ask("yes", thread="q")
    assert done.data["outcome"] == "done", done.answer
    annotations = crew.web()["spec"]["template"]["metadata"].get("annotations") or {}
    assert "kubectl.kubernetes.io/restartedAt" in annotations


def test_a_malformed_request_is_refused_to_the_model(crew: Crew) -> None:
    planner = model(
        calls(("request_change", request("scale", replicas=-4))),
        AIMessage("I could not"),
    )
    outcome = crew.ask("scale web to 2", planner=planner)
    [scripted] = [planner.model] if isinstance(planner.model, ScriptedChatModel) else []
    refused = [m for m in scripted.seen[-1] if getattr(m, "status", "") == "error"]
    assert refused and "not a change this agent knows" in str(refused[0].content)
    assert outcome.data.get("outcome") != "done" and crew.mutations() == []


def _object(kind: str, name: str) -> dict[str, str]:
    return {"kind": kind, "name": name, "namespace": "staging"}


MODEL_CHANGES = [
    (
        "expose web on port 80",
        {"op": "expose", "target": _object("Service", "web"), "workload": "Deployment web",
         "selector": {"app": "web"}, "ports": [{"port": 80}]},
        ("service", "web", "spec.selector.app", "web"),
    ),
    (
        "give web a disruption budget of one unavailable pod",
        {"op": "budget", "target": _object("PodDisruptionBudget", "web-pdb"),
         "workload": "Deployment web", "selector": {"app": "web"}, "max_unavailable": 1},
        ("pdb", "web-pdb", "spec.maxUnavailable", 1),
    ),
    (
        "add a readiness probe to web",
        {"op": "set_probes", "target": _object("Deployment", "web"), "container": "web",
         "probes": {"readiness": {"handler": "http", "path": "/", "port": 80}}},
        ("deployment", "web", "spec.template.spec.containers.0.readinessProbe.httpGet.path", "/"),
    ),
]  # fmt: skip


def _field(obj: dict[str, Any], path: str) -> Any:
    for part in path.split("."):
        obj = obj[int(part)] if part.isdigit() else obj[part]
    return obj


def test_the_new_kinds_planned_by_a_model_go_the_same_way(crew: Crew) -> None:
    for number, (text, change, (kind, name, path, wanted)) in enumerate(MODEL_CHANGES):
        planner = model(calls(("request_change", {"change": change})), AIMessage("done"))
        outcome = crew.ask(text, planner=planner, thread=f"m{number}")
        assert outcome.data["outcome"] == "done", (text, outcome.answer)
        assert any(s.startswith("policy store approved it") for s in outcome.data["steps"])
        made = crew.kubectl.json("get", kind, name, "-n", "staging")
        assert _field(made, path) == wanted, text
    assert len(crew.mutations()) == len(MODEL_CHANGES)
