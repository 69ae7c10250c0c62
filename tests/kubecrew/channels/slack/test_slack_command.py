"""`kubecrew slack` as a process: clean startup errors, and restarts that never repost.

The installed `kubecrew` runs in subprocesses against the fake Slack Web API; HTTP mode listens
on a free port, which the command prints on stderr once it serves.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.policy import approvals
from core.policy.proposals import Identity
from core.policy.store.sqlite import SqliteStore
from tests.support.policies import escalated
from tests.support.slack import FakeSlack
from tests.support.slack_app import OWNERS, PEOPLE, SECRET
from tests.support.waiting import eventually

KUBECREW = str(Path(sys.executable).parent / "kubecrew")


def environ(**extra: str) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("KUBECREW_", "SLACK_"))}
    return {**clean, **extra}


def options(slack: FakeSlack, tmp_path: Path, *more: str) -> list[str]:
    people = tmp_path / "people.yaml"
    people.write_text(PEOPLE)
    store = tmp_path / "policy" / "store.sqlite"
    return [
        "--store", str(store), "--people", str(people), "--api-url", slack.url, *more,
    ]  # fmt: skip


def run(args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KUBECREW, "slack", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=environ(**env),
    )


@pytest.mark.parametrize(
    ("mode", "env", "says"),
    [
        ("http", {"SLACK_SIGNING_SECRET": SECRET}, "$SLACK_BOT_TOKEN is not set"),
        ("http", {"SLACK_BOT_TOKEN": "xoxb-test-bot-token"}, "$SLACK_SIGNING_SECRET is not set"),
        ("socket", {"SLACK_BOT_TOKEN": "xoxb-test-bot-token"}, "$SLACK_APP_TOKEN is not set"),
        (
            "socket",
            {"SLACK_BOT_TOKEN": "xoxb-test-bot-token", "SLACK_APP_TOKEN": "xoxb-not-an-app-token"},
            "$SLACK_APP_TOKEN does not start with 'xapp-'",
        ),
        (
            "http",
            {"SLACK_BOT_TOKEN": "xoxb-revoked-secret-value", "SLACK_SIGNING_SECRET": SECRET},
            "Slack refused $SLACK_BOT_TOKEN (auth.test: invalid_auth)",
        ),
        (
            "socket",
            {"SLACK_BOT_TOKEN": "xoxb-test-bot-token", "SLACK_APP_TOKEN": "xapp-revoked-value"},
            "Slack refused $SLACK_APP_TOKEN (apps.connections.open: invalid_auth)",
        ),
    ],
    ids=["no-bot-token", "no-signing-secret", "no-app-token", "wrong-kind", "bad-bot", "bad-app"],
)
def test_a_missing_or_refused_credential_is_one_line_without_the_secret(
    slack: FakeSlack, tmp_path: Path, mode: str, env: dict[str, str], says: str
) -> None:
    done = run(options(slack, tmp_path, "--mode", mode, "--port", "0"), **env)
    assert done.returncode == 1
    assert says in " ".join(done.stderr.split())
    assert "Traceback" not in done.stderr
    for secret in env.values():
        assert secret not in done.stderr + done.stdout
    assert slack.calls("chat.postMessage") == []


@pytest.fixture
def started(slack: FakeSlack, tmp_path: Path) -> Iterator[list[subprocess.Popen[str]]]:
    processes: list[subprocess.Popen[str]] = []
    yield processes
    for process in processes:
        if process.poll() is None:
            process.terminate()
            process.communicate(timeout=30)


def start(
    slack: FakeSlack, tmp_path: Path, processes: list[subprocess.Popen[str]]
) -> subprocess.Popen[str]:
    log = tmp_path / f"slack-{len(processes)}.log"
    args = options(slack, tmp_path, "--mode", "http", "--port", "0", "--poll", "0.2")
    with log.open("w") as sink:  # a file, not a pipe: nobody has to keep reading it
        process = subprocess.Popen(
            [KUBECREW, "slack", *args],
            stdout=subprocess.DEVNULL,
            stderr=sink,
            text=True,
            env=environ(SLACK_BOT_TOKEN=slack.bot_token, SLACK_SIGNING_SECRET=SECRET),
        )
    processes.append(process)
    eventually(
        lambda: (
            "serving Slack events at http://127.0.0.1:" in log.read_text()
            or process.poll() is not None
        ),
        timeout=30,
        what="kubecrew slack serving",
    )
    assert process.poll() is None, log.read_text()
    return process


def stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    assert process.wait(timeout=30) in (0, -15)


def test_a_restarted_app_neither_reposts_nor_forgets_a_message(
    slack: FakeSlack, tmp_path: Path, started: list[subprocess.Popen[str]]
) -> None:
    store = tmp_path / "policy" / "store.sqlite"
    first = escalated(store)
    stop_first = start(slack, tmp_path, started)
    eventually(lambda: len(slack.calls("chat.postMessage")) == 1, timeout=15, what="one post")
    stop(stop_first)

    second = escalated(store)  # proposed while the app was down
    opened = SqliteStore(store)  # and the first one granted meanwhile, from another channel
    alice = Identity(kind="person", name="alice", groups=("shop-admins",))
    approvals.answer(opened, first.id, alice, "grant", via="mcp", now=datetime.now(UTC))
    opened.close()
    again = start(slack, tmp_path, started)
    posts = eventually(
        lambda: [p for p in slack.calls("chat.postMessage") if second.id in p["text"]],
        timeout=15,
        what="the new request posted",
    )
    assert len(posts) == 1 and posts[0]["channel"] == OWNERS
    assert [p for p in slack.calls("chat.postMessage") if first.id in p["text"]] != []
    assert len(slack.calls("chat.postMessage")) == 2
    (update,) = eventually(
        lambda: slack.calls("chat.update"), timeout=15, what="the first message updated"
    )
    assert first.id in update["text"] and "Granted by alice via mcp" in update["text"]
    stop(again)
