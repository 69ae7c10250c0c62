"""A real provider client plans changes as the scripted model does: the project's own
`load_chat_model("openai:...")` builds langchain-openai's client, pointed by its environment at a
local server speaking OpenAI's chat-completions protocol (tests/support/chat_completions.py), so
tool schemas, tool-call ids, JSON-string arguments and `role: "tool"` results cross a real wire.
A commanded scale it plans is carried out through the gates and audited once; one that policy
refuses changes nothing; no kube write is ever offered to it (only `request_change`), and one it
names anyway is refused before any server sees it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from langchain_openai import ChatOpenAI

from agents.runtime.brain import GUARD_ENV, ModelPlanner, load_chat_model
from agents.runtime.roles import load_role
from tests.support.changes import Crew
from tests.support.chat_completions import (
    ChatCompletions,
    Turn,
    calls,
    running_chat_completions,
    says,
)

KUBE_WRITES = {"scale", "patch", "apply", "delete", "set_image", "rollout_undo",
               "rollout_restart", "set_resources"}  # fmt: skip


def request(op: str, namespace: str = "staging", **fields: Any) -> dict[str, Any]:
    target = {"kind": "Deployment", "name": "web", "namespace": namespace}
    return {"change": {"op": op, "target": target, **fields}}


@contextmanager
def over_http(
    monkeypatch: pytest.MonkeyPatch, *turns: Turn
) -> Iterator[tuple[ModelPlanner, ChatCompletions]]:
    """A planner around the real OpenAI client, configured by its environment variables alone.
    The model guard is lifted only while the planner is made, once the client is known to reach
    nothing but the local server."""
    with running_chat_completions(turns) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", server.key)
        unguarded = {name: value for name, value in os.environ.items() if name != GUARD_ENV}
        model = load_chat_model("openai:gpt-4.1-mini", unguarded)
        assert isinstance(model, ChatOpenAI)
        assert str(model.root_async_client.base_url) == f"{server.url}/"
        with monkeypatch.context() as lifted:
            lifted.delenv(GUARD_ENV)
            planner = ModelPlanner(model)
        yield planner, server


def text(content: str | list[dict[str, Any]]) -> str:
    """A message's content as text: OpenAI allows a string or a list of text parts."""
    return content if isinstance(content, str) else "".join(part["text"] for part in content)


def test_a_commanded_scale_planned_over_http_is_carried_out_through_the_gates(
    crew: Crew, monkeypatch: pytest.MonkeyPatch
) -> None:
    with over_http(
        monkeypatch,
        calls(("get_resource", {"kind": "deployment", "name": "web", "namespace": "staging"})),
        calls(("request_change", request("scale", replicas=3))),
        says("web scaled to 3 as asked"),
    ) as (planner, server):
        outcome = crew.ask("scale web to three please", planner=planner)
    assert outcome.data["outcome"] == "done", outcome.answer
    assert crew.web()["spec"]["replicas"] == 3
    assert any(s.startswith("policy store approved it") for s in outcome.data["steps"])
    assert len(crew.mutations()) == 1

    assert server.paths == ["POST /v1/chat/completions"] * 3
    assert not any(body.get("stream") for body in server.requests)
    assert all({"get_resource", "request_change"} <= offered for offered in server.offered())
    read, recorded = server.tool_results()
    assert (read["tool_call_id"], recorded["tool_call_id"]) == ("call_1_0", "call_2_0")
    assert "replicas: 2" in text(read["content"])
    assert "recorded: scale Deployment web in staging to 3" in text(recorded["content"])


def test_a_change_planned_over_http_that_policy_refuses_changes_nothing(
    crew: Crew, monkeypatch: pytest.MonkeyPatch
) -> None:
    crew.deploy_web("shop")
    crew.kubectl("scale", "deploy/web", "-n", "shop", "--replicas=3")
    with over_http(
        monkeypatch, calls(("request_change", request("scale", "shop", replicas=1))), says("done")
    ) as (planner, server):
        outcome = crew.ask("scale web in shop down to 1", planner=planner)
    assert outcome.data["outcome"] == "refused", outcome.answer
    assert "CapacityPolicy shop-min-capacity" in outcome.answer
    assert crew.web("shop")["spec"]["replicas"] == 3 and crew.mutations() == []
    assert len(server.requests) == 2


def test_the_model_over_http_is_offered_no_kube_write_and_one_it_names_is_refused(
    crew: Crew, monkeypatch: pytest.MonkeyPatch
) -> None:
    scale = {"kind": "deployment", "name": "web", "namespace": "staging", "replicas": 5}
    with over_http(monkeypatch, calls(("scale", scale)), says("I could not")) as (planner, server):
        outcome = crew.ask("scale web to 5", planner=planner)
    assert load_role("dev_team").tools & KUBE_WRITES  # the role writes, by the change path only
    for offered in server.offered():
        assert offered.isdisjoint(KUBE_WRITES), offered & KUBE_WRITES
    [refused] = server.tool_results()
    assert refused["tool_call_id"] == "call_1_0"
    assert "a model plans reads only; nothing was called" in text(refused["content"])
    assert outcome.data.get("outcome") != "done" and crew.mutations() == []
    assert crew.web()["spec"]["replicas"] == 2


def test_one_planner_answers_message_after_message_each_on_its_own_event_loop(
    crew: Crew, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`kubecrew chat` and Slack run a fresh event loop per message, while the provider client
    pools its connections per process: the model's calls keep to one loop of their own."""
    with over_http(
        monkeypatch, says("web answers as it should"), says("still nothing wrong with web")
    ) as (planner, server):
        first = crew.ask("why is web slow?", planner=planner, thread="q")
        second = crew.ask("and why is web slow now?", planner=planner, thread="q")
    assert "web answers as it should" in first.answer, first.answer
    assert "still nothing wrong with web" in second.answer, second.answer
    assert len(server.requests) == 2 and crew.mutations() == []
