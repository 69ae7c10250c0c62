"""Conversations in Slack through the front door, for real: signed mentions, DMs and `/kubecrew`
to the Bolt app, the Dev Team agent on a sandbox whose `web` crash-loops, approvals in the
policy store, and what the app sent the fake Slack Web API read back.

One Slack thread is one conversation: the answer comes in the thread (one message, edited while
the agent works), a follow-up in the thread is about the same workload on the same LangGraph
thread, and so is one after the app restarted with the same home.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from agents.runtime.brain import Deterministic
from agents.runtime.toolbox import Servers
from core.policy.store.sqlite import SqliteStore
from kubecrew.channels.frontdoor import FrontDoor, thread_of
from kubecrew.channels.slack.conversation import Router, front_door_router
from mcp_servers.kube.settings import KubeSettings
from sandbox.server import Sandbox
from tests.support.diagnosis import NS, Doctor, deployment
from tests.support.kubectl import Kubectl
from tests.support.slack import mention
from tests.support.slack_app import OWNERS, App
from tests.support.waiting import eventually

QUESTION_TS = "1765000200.000100"


def door_router(home: Path, store_path: Path, kubeconfig: Path | None = None) -> Router:
    servers = Servers(kube=KubeSettings(kubeconfig=kubeconfig)) if kubeconfig else Servers()
    door = FrontDoor(
        servers=servers,
        planner=Deterministic(),
        home=home,
        open_store=lambda: SqliteStore(store_path),
        via="slack",
    )
    return front_door_router(door)


def say(app: App, user: str, text: str, *, ts: str, thread_ts: str | None = None) -> None:
    body = mention(
        user=user, channel=OWNERS, ts=ts, text=f"<@U0KUBEBOT> {text}", thread_ts=thread_ts
    )
    assert app.send(body, content_type="application/json").status_code == 200


def shown(message: dict[str, Any]) -> str:
    """What a person sees of a message: its blocks' text, else its text."""
    texts = [b["text"]["text"] for b in message.get("blocks", []) if "text" in b]
    texts += [e["text"] for b in message.get("blocks", []) for e in b.get("elements", [])]
    return "\n".join(texts) or str(message.get("text", ""))


def answers_in(app: App, thread: str) -> list[tuple[str, dict[str, Any]]]:
    """The app's messages in `thread`, as they stand now, oldest first."""
    return sorted(
        (ts, m) for (channel, ts), m in app.slack.messages.items()
        if channel == OWNERS and m.get("thread_ts") == thread
    )  # fmt: skip


def answer_after(app: App, thread: str, count: int, says: str) -> str:
    """Wait until the thread's `count`-th message is an answer containing `says`."""

    def ready() -> str:
        found = answers_in(app, thread)
        if len(found) < count or "Working on it" in shown(found[count - 1][1]):
            return ""
        text = shown(found[count - 1][1])
        return text if says in text else ""

    return str(eventually(ready, timeout=45, what=f"answer {count} saying {says!r}"))


@pytest.fixture
def crashing(sandbox: Sandbox, kubectl: Kubectl) -> Path:
    kubectl("create", "namespace", NS)
    container = {"image": "busybox:1.36", "command": ["sh", "-c", "echo config is broken; exit 3"]}
    kubectl("apply", "-f", "-", input=deployment("web", container))
    Doctor(sandbox).finding("CrashLoopBackOff", namespace=NS, kind="deployment", name="web")
    return sandbox.kubeconfig


def test_a_thread_is_one_conversation_across_follow_ups_and_a_restart(
    serve: Callable[..., App], crashing: Path, tmp_path: Path, store_path: Path
) -> None:
    home = tmp_path / "crew"
    app = serve(router=door_router(home, store_path, crashing))
    say(app, "U0ALICE", "why is web failing?", ts=QUESTION_TS)
    first = answer_after(app, QUESTION_TS, 1, "is failing")
    assert first.startswith("*Deployment web in shop is failing:"), first
    assert "CrashLoopBackOff" in first or "keeps exiting" in first
    assert "config is broken" in first and "*Evidence:*" in first
    in_thread = [c for c in app.slack.calls("chat.postMessage") if c.get("thread_ts")]
    assert len(in_thread) == 1  # one message, edited while working, then the answer
    assert app.slack.calls("chat.update"), "progress shows as edits of that message"
    key = f"{OWNERS}:{QUESTION_TS}"
    thread = thread_of(home, key)
    assert thread is not None and f"thread `{thread}`" in first

    say(app, "U0BOB", "is it still failing?", ts="1765000200.000300", thread_ts=QUESTION_TS)
    second = answer_after(app, QUESTION_TS, 2, "Deployment web in shop is failing")
    assert f"thread `{thread}`" in second

    restarted = serve(router=door_router(home, store_path, crashing))
    say(restarted, "U0ALICE", "and now?", ts="1765000200.000500", thread_ts=QUESTION_TS)
    third = answer_after(restarted, QUESTION_TS, 3, "Deployment web in shop is failing")
    assert f"thread `{thread}`" in third and thread_of(home, key) == thread


def test_approve_in_slack_grants_for_an_approver_and_refuses_mallory(
    serve: Callable[..., App], tmp_path: Path, store_path: Path
) -> None:
    app = serve(router=door_router(tmp_path / "crew", store_path))
    request = app.escalate()
    say(app, "U0MALLORY", f"approve {request.id}", ts="1765000300.000100")
    refused = answer_after(app, "1765000300.000100", 1, request.id)
    assert "may not answer" in refused and "shop-admins" in refused
    assert app.store().approval(request.id).state == "pending"

    say(app, "U0ALICE", f"approve {request.id} because the sale is over", ts="1765000300.000300")
    granted = answer_after(app, "1765000300.000300", 1, "granted")
    assert f"{request.id}: granted by alice, recorded; the request is granted" in granted
    after = app.store().approval(request.id)
    assert after.state == "granted"
    ((answer),) = after.answers
    assert (answer.by.name, answer.via, answer.reason) == ("alice", "slack", "the sale is over")


def test_the_slash_command_answers_in_a_thread_of_its_own(
    serve: Callable[..., App], tmp_path: Path, store_path: Path
) -> None:
    app = serve(router=door_router(tmp_path / "crew", store_path))
    request = app.escalate()
    form = {"command": "/kubecrew", "text": "approvals", "user_id": "U0BOB",
            "channel_id": OWNERS, "team_id": "T0KUBECREW", "trigger_id": "1.2.3",
            "response_url": app.slack.url + "response"}  # fmt: skip
    sent = app.send(urlencode(form).encode(), content_type="application/x-www-form-urlencoded")
    assert sent.status_code == 200

    def head() -> str:
        posted = app.slack.messages.items()
        return next((ts for (_, ts), m in posted if "asked: approvals" in m["text"]), "")

    ts = eventually(head, timeout=10, what="the question posted")
    listed = answer_after(app, ts, 1, "waiting")
    assert request.id in listed and "approve <id>" in listed.replace("&lt;", "<").replace(
        "&gt;", ">"
    )
    (asked,) = [m for m in app.slack.messages.values() if "asked: approvals" in m["text"]]
    assert "thread_ts" not in asked and asked["text"] == "<@U0BOB> asked: approvals"


def test_who_to_ask_is_a_question_when_the_words_do_not_say(
    serve: Callable[..., App], tmp_path: Path, store_path: Path
) -> None:
    app = serve(router=door_router(tmp_path / "crew", store_path))
    say(app, "U0ALICE", "hello, can you help?", ts="1765000400.000100")
    asked = answer_after(app, "1765000400.000100", 1, "Which agent")
    assert "Dev Team" in asked and "Cluster Operator" in asked
