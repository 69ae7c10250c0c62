"""Approvals in Slack: the issue's escalated downscale, answered with a button click.

The app runs for real in HTTP events mode; clicks are signed block_actions payloads POSTed to
its events URL, and what it says to Slack is read from the fake Web API.
"""

from __future__ import annotations

import concurrent.futures
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from core.errors import Conflict
from core.policy import approvals
from core.policy.proposals import Identity
from kubecrew.channels.slack.approvals_ui import DENY, GRANT
from tests.support.policies import escalated
from tests.support.slack import interaction
from tests.support.slack_app import OWNERS, App, buttons, text_of
from tests.support.waiting import eventually

KUBECREW = str(Path(sys.executable).parent / "kubecrew")


def test_alice_approves_the_escalated_downscale_and_the_waiting_agent_resumes_once(
    serve: Callable[..., App],
) -> None:
    app = serve()
    request = app.escalate()
    post = app.posted(request)
    assert post["channel"] == OWNERS
    assert buttons(post["blocks"]) == [GRANT, DENY]
    shown = text_of(post["blocks"])
    assert "scale Deployment shop/web 5 -&gt; 1 replicas directly" in shown
    approvers = (
        "group shop-admins (1 needed)\nThe Platform agent may also settle it under org policy"
    )
    assert f"*Approvers*\n{approvers}" in shown and "*Expires*" in shown
    assert all(reason.replace(">", "&gt;") in shown for reason in request.reasons)

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        store = app.store()
        waiting = pool.submit(
            lambda: approvals.wait(app.store(), request.id, waiter="remediation", timeout=20)
        )
        answered = app.click("U0ALICE", request, action=GRANT)
        assert answered.status_code == 200
        resumed = waiting.result(timeout=25)
    assert resumed is not None and resumed.state == "granted"
    with pytest.raises(Conflict, match="already taken up by remediation"):
        approvals.wait(store, request.id, waiter="another", timeout=1)

    decision = store.get(request.proposal).decision
    assert decision is not None and decision.outcome == "approved"
    assert decision.decided_by == Identity(kind="person", name="alice", groups=("shop-admins",))
    (given,) = store.approval(request.id).answers
    assert (given.by.name, given.via, given.verdict) == ("alice", "slack", "grant")
    store.close()

    def updated() -> list[dict[str, Any]]:
        return app.slack.calls("chat.update")

    (update,) = eventually(updated, timeout=10, what="the message updated")
    assert (update["channel"], update["ts"]) == (OWNERS, app.ts_of(request))
    assert "Granted by alice via slack" in update["text"]
    assert buttons(update["blocks"]) == []
    time.sleep(0.6)  # a few poster passes: nothing posted or updated again
    assert len(app.slack.calls("chat.postMessage")) == 1
    assert len(app.slack.calls("chat.update")) == 1
    assert app.slack.calls("chat.postEphemeral") == []


@pytest.mark.parametrize(
    ("user", "says"),
    [
        (
            "U0MALLORY",
            "person mallory may not answer {id}: it needs group shop-admins; the Platform agent "
            "may also settle it under org policy.",
        ),
        ("U0STRANGER", "Your Slack account (U0STRANGER) is not in kubecrew's people file"),
    ],
    ids=["not-an-approver", "unknown-account"],
)
def test_a_click_by_someone_not_authorised_is_explained_to_them_alone(
    serve: Callable[..., App], user: str, says: str
) -> None:
    app = serve()
    request = app.escalate()
    assert app.click(user, request, action=GRANT).status_code == 200
    (reply,) = eventually(
        lambda: app.slack.calls("chat.postEphemeral"), timeout=10, what="an ephemeral reply"
    )
    assert (reply["user"], reply["channel"]) == (user, OWNERS)
    assert says.format(id=request.id) in reply["text"]
    store = app.store()
    assert (
        store.approval(request.id).state == "pending" and store.approval(request.id).answers == []
    )
    store.close()
    assert app.slack.calls("chat.update") == []


def test_a_bad_or_stale_signature_is_refused_and_nothing_is_done(
    serve: Callable[..., App],
) -> None:
    app = serve()
    request = app.escalate()
    app.posted(request)
    body = interaction(
        user="U0ALICE",
        channel=OWNERS,
        ts=app.ts_of(request),
        action_id=GRANT,
        value=request.id,
        response_url=app.slack.url + "response",
    )
    form = "application/x-www-form-urlencoded"
    forged = app.send(body, content_type=form, secret="not-the-signing-secret")
    stale = app.send(body, content_type=form, timestamp=int(time.time()) - 600)
    assert (forged.status_code, stale.status_code) == (401, 401)
    time.sleep(0.5)
    store = app.store()
    assert store.approval(request.id).state == "pending"
    store.close()
    assert app.slack.calls("chat.update") == [] and app.slack.calls("chat.postEphemeral") == []


def test_a_deny_from_another_channel_ends_it_and_a_late_click_shows_the_final_state(
    serve: Callable[..., App], store_path: Path
) -> None:
    request = escalated(store_path)
    app = serve(poll=60)  # one pass, at start: the click, not the poster, must show the end
    app.posted(request)
    store = app.store()
    bob = Identity(kind="person", name="bob", groups=("shop-admins",))
    approvals.answer(store, request.id, bob, "deny", via="mcp", now=datetime.now(UTC))
    store.close()

    assert app.click("U0ALICE", request, action=GRANT).status_code == 200
    (reply,) = eventually(
        lambda: app.slack.calls("chat.postEphemeral"), timeout=10, what="an ephemeral reply"
    )
    assert f"{request.id} is already denied" in reply["text"]
    (update,) = app.slack.calls("chat.update")
    assert "Denied by bob via mcp" in update["text"] and buttons(update["blocks"]) == []
    store = app.store()
    assert [given.by.name for given in store.approval(request.id).answers] == ["bob"]
    store.close()


def test_a_grant_from_the_cli_updates_the_slack_message(serve: Callable[..., App]) -> None:
    app = serve()
    request = app.escalate()
    app.posted(request)
    granted = subprocess.run(
        [
            KUBECREW,
            "approvals",
            "grant",
            request.id,
            "--as",
            "alice",
            "--group",
            "shop-admins",
            "--store",
            str(app.store_path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert granted.returncode == 0, granted.stderr
    (update,) = eventually(
        lambda: app.slack.calls("chat.update"), timeout=10, what="the message updated"
    )
    assert (update["channel"], update["ts"]) == (OWNERS, app.ts_of(request))
    assert "Granted by alice via cli" in update["text"] and buttons(update["blocks"]) == []


def test_outside_a_channels_allow_list_even_an_approver_is_refused(
    serve: Callable[..., App],
) -> None:
    app = serve(allow={OWNERS: frozenset({"U0BOB"})})
    request = app.escalate()
    assert app.click("U0ALICE", request, action=DENY).status_code == 200
    (reply,) = eventually(
        lambda: app.slack.calls("chat.postEphemeral"), timeout=10, what="an ephemeral reply"
    )
    assert "allow-list" in reply["text"] and reply["user"] == "U0ALICE"
    store = app.store()
    assert store.approval(request.id).state == "pending"
    store.close()
    assert app.slack.calls("chat.update") == []
