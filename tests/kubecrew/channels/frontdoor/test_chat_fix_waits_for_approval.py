"""`kubecrew chat` with the crew's options, in a real pseudo-terminal: "fix web" under the team's
ChangePolicy stops for shop-admins and says which request waits and who may answer; alice
types "approve <id>" in the same chat, and the fix carries on there, once: one pull request,
merged, web healed, the request claimed by the conversation's thread. A second "approve"
finds the request ended and resumes nothing. And the same in a Slack thread's front door,
when the request is answered elsewhere."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from agents.runtime.brain import Deterministic
from core.policy.proposals import Identity
from core.policy.store import open_store
from kubecrew.channels.frontdoor import FrontDoor
from kubecrew.crew import resolve
from sandbox.server import Sandbox
from tests.support.crew import crew_args, crew_env, crew_of, prs
from tests.support.heals import TYPO, break_web
from tests.support.mcp_hosts import KUBECREW
from tests.support.team import Team, proposals
from tests.support.terminal import Terminal


@pytest.fixture
def chat(guarded: Team, sandbox: Sandbox, tmp_path: Path) -> Iterator[Terminal]:
    break_web(guarded, sandbox)
    args = [KUBECREW, "chat", *crew_args(guarded), "--as", "alice", "--group", "shop-admins"]
    opened = Terminal(args, crew_env(tmp_path / "home"))
    try:
        yield opened
    finally:
        opened.close()


def test_fix_web_waits_for_its_approver_and_approve_in_the_chat_resumes_it_once(
    chat: Terminal, guarded: Team
) -> None:
    chat.expect(r"kubecrew chat.*as person alice")
    chat.expect(r"kubecrew>")
    chat.type("fix web in shop\r")
    chat.expect(r"Reply 'yes' to go on", timeout=60)  # a heal is confirmed in the chat first
    assert prs(guarded) == [] and guarded.image() == TYPO
    chat.type("yes\r")
    waiting = chat.expect(r"dev team · thread \w+", timeout=90)
    assert "Not done yet: this change waits for approval request" in waiting, waiting
    found = re.search(r"approval request (a-[0-9a-f]+)", waiting)
    assert found, waiting
    request = found.group(1)
    assert "group shop-admins answer " + request in waiting
    assert f"'approve {request}'" in waiting
    assert prs(guarded) == [] and guarded.image() == TYPO

    chat.type(f"approve {request}\r")
    resumed = chat.expect(r"· thread \w+", timeout=90)
    assert f"{request}: granted by alice, recorded; the request is granted." in resumed
    assert f"Resumed the work that waited for {request}" in resumed
    assert "Healed Deployment web in shop" in resumed
    assert guarded.image() == "nginx:1.27"
    [pr] = prs(guarded)
    assert pr.state == "merged"

    chat.type(f"approve {request}\r")
    again = chat.expect(r"front door", timeout=30)
    assert "Resumed" not in again
    chat.type("exit\r")
    chat.expect("bye")
    assert chat.process.wait(timeout=15) == 0
    assert len(prs(guarded)) == 1 and proposals(guarded) == 1
    store = open_store(str(guarded.store))
    try:
        claimed_by = store.approval(request).claimed_by
    finally:
        store.close()
    assert claimed_by is not None and claimed_by.startswith("agent dev_team ")


def test_work_waiting_in_a_slack_thread_resumes_once_when_answered_elsewhere(
    guarded: Team, sandbox: Sandbox, tmp_path: Path
) -> None:
    """The front door as `kubecrew slack` builds it: the request is answered outside the
    thread (an Approve click, here `kubecrew approvals grant`), and the app's periodic
    `resume_answered` carries the thread's work on, once."""
    break_web(guarded, sandbox)
    home = tmp_path / "home"
    crew = resolve(crew_of(guarded), {"KUBECREW_HOME": str(home)})
    door = FrontDoor(
        servers=crew.servers("dev_team"),
        planner=Deterministic(),
        home=home,
        open_store=lambda: open_store(str(guarded.store)),
        via="slack",
        agent_servers=crew.servers,
    )
    alice = Identity(kind="person", name="alice", groups=("shop-admins",))
    thread = "C0123:1765000100.000200"

    confirm = anyio.run(lambda: door.handle(thread, "<@U0BOT> fix web in shop", alice))
    assert confirm.kind == "clarify" and "Reply 'yes'" in confirm.text, confirm.text
    asked = anyio.run(lambda: door.handle(thread, "<@U0BOT> yes", alice))
    assert asked.kind == "approval", asked.text
    request = asked.report["waiting_for"]
    assert f"click Approve on its message, or say 'approve {request}'" in asked.text
    assert anyio.run(door.resume_answered) == []  # still pending: nothing resumes

    granted = subprocess.run(
        [KUBECREW, "approvals", "grant", request, "--as", "alice", "--group", "shop-admins",
         "--store", str(guarded.store)],
        capture_output=True, text=True, env=crew_env(home), timeout=60, check=False,
    )  # fmt: skip
    assert granted.returncode == 0, granted.stdout + granted.stderr

    [(key, resumed)] = anyio.run(door.resume_answered)
    assert key == thread and resumed.agent == "dev_team"
    assert f"Resumed the work that waited for {request}" in resumed.text
    assert "Healed Deployment web in shop" in resumed.text
    assert anyio.run(door.resume_answered) == []  # once
    assert guarded.image() == "nginx:1.27" and len(prs(guarded)) == 1
