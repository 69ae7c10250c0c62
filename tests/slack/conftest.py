"""The Slack app for real, in HTTP events mode on a loopback port, against a fake Slack Web API.

`app` runs `SlackService.serve_http` (the code `kubecrew slack --mode http` runs) on a thread,
with a SQLite policy store and a people file in the test's directory, and the repository's
default policies (the shop's owners' channel is C05H0PADM1). Tests drive it the way Slack does:
signed POSTs to its events URL (`App.click`, `App.send`), and read what it sent Slack.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from core.policy.negotiation import negotiate
from core.policy.people import load_people
from core.policy.proposals import ApprovalRequest
from core.policy.store.sqlite import SqliteStore
from kubecrew.channels.slack.app import HttpServer, SlackService, connect
from kubecrew.channels.slack.conversation import Router
from kubecrew.channels.slack.deps import SlackDeps
from kubecrew.channels.slack.ledger import ledger_path
from kubecrew.channels.slack.owners import load_policies
from kubecrew.channels.slack.settings import Credentials, SlackSettings
from tests.policy.builders import defaults, downscale
from tests.support.slack import FakeSlack, interaction, post_signed, running_slack
from tests.support.waiting import eventually

OWNERS = "C05H0PADM1"  # policies/ownership.yaml: the shop's channel
SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
PEOPLE = """\
apiVersion: kubecrew.io/v1alpha1
kind: People
people:
  - {name: alice, groups: [shop-admins], slack: U0ALICE}
  - {name: bob, groups: [shop-admins], slack: U0BOB}
  - {name: mallory, groups: [developers], slack: U0MALLORY}
"""


def escalated(store_path: Path) -> ApprovalRequest:
    """The issue's inverse case: the counter is refused, so shop-admins must decide."""
    now = datetime.now(UTC)
    store = SqliteStore(store_path)
    try:
        proposal = downscale(created=now, counters="refuse")
        store.propose(proposal)
        negotiate(store, defaults(), proposal.id, now=now)
        (request,) = [r for r in store.approvals() if r.proposal == proposal.id]
    finally:
        store.close()
    return request


@dataclass
class App:
    slack: FakeSlack
    url: str  # the app's events URL
    store_path: Path

    def escalate(self) -> ApprovalRequest:
        return escalated(self.store_path)

    def posted(self, request: ApprovalRequest) -> dict[str, Any]:
        """The one chat.postMessage for `request` (waits for the poster to send it)."""

        def found() -> list[dict[str, Any]]:
            return [c for c in self.slack.calls("chat.postMessage") if request.id in c["text"]]

        (post,) = eventually(found, timeout=15, what=f"{request.id} posted")
        return post

    def ts_of(self, request: ApprovalRequest) -> str:
        self.posted(request)
        messages = list(self.slack.messages.items())
        (ts,) = [ts for (_, ts), message in messages if request.id in message["text"]]
        return ts

    def click(
        self, user: str, request: ApprovalRequest, *, action: str, channel: str = OWNERS
    ) -> httpx.Response:
        body = interaction(
            user=user,
            channel=channel,
            ts=self.ts_of(request),
            action_id=action,
            value=request.id,
            response_url=self.slack.url + "response",
        )
        return self.send(body, content_type="application/x-www-form-urlencoded")

    def send(
        self, body: bytes, *, content_type: str, secret: str = SECRET, timestamp: int | None = None
    ) -> httpx.Response:
        return post_signed(
            self.url, body, secret=secret, content_type=content_type, timestamp=timestamp
        )

    def store(self) -> SqliteStore:
        return SqliteStore(self.store_path)


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with running_slack(channels={OWNERS, "C0FALLBACK"}) as fake:
        yield fake


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "policy" / "store.sqlite"


@pytest.fixture
def serve(slack: FakeSlack, tmp_path: Path, store_path: Path) -> Iterator[Callable[..., App]]:
    """`serve(poll=..., allow=..., router=...)` starts the app; every app stops at teardown."""
    people = tmp_path / "people.yaml"
    people.write_text(PEOPLE)
    running: list[tuple[HttpServer, threading.Thread]] = []

    def start(
        *,
        poll: float = 0.2,
        allow: dict[str, frozenset[str]] | None = None,
        router: Router | None = None,
    ) -> App:
        settings = SlackSettings(
            mode="http",
            credentials=Credentials(bot_token=slack.bot_token, signing_secret=SECRET),
            api_url=slack.url,
            port=0,
            store=str(store_path),
            people=people,
            channel="C0FALLBACK",
            allow=allow or {},
            poll=poll,
        )
        deps = SlackDeps(
            settings=settings,
            people=load_people(people),
            policies=load_policies(),
            open_store=lambda: SqliteStore(store_path),
            ledger_path=ledger_path(str(store_path)),
        )
        client, _ = connect(settings)
        service = SlackService(deps, client, router=router)
        server = service.http_server()
        thread = threading.Thread(target=service.serve_http, args=(server,), daemon=True)
        thread.start()
        running.append((server, thread))
        eventually(lambda: server.started, timeout=10, what="the app serving")
        return App(slack=slack, url=server.url, store_path=store_path)

    yield start
    for server, thread in running:
        server.stop()
        thread.join(timeout=30)
