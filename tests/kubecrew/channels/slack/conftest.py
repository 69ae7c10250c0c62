"""The Slack app for real, in HTTP events mode on a loopback port, against a fake Slack Web API.

`serve` runs `SlackService.serve_http` (the code `kubecrew slack --mode http` runs) on a thread,
with a SQLite policy store and a people file in the test's directory, and the repository's
default policies (the shop's owners' channel is C05H0PADM1). Tests drive it the way Slack does:
signed POSTs to its events URL (`App.click`, `App.send`, tests/support/slack_app.py), and read
what it sent Slack.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from core.policy.people import load_people
from core.policy.store.sqlite import SqliteStore
from kubecrew.channels.slack.app import HttpServer, SlackService, connect
from kubecrew.channels.slack.conversation import Router
from kubecrew.channels.slack.deps import SlackDeps
from kubecrew.channels.slack.ledger import ledger_path
from kubecrew.channels.slack.owners import load_policies
from kubecrew.channels.slack.settings import Credentials, SlackSettings
from tests.support.slack import FakeSlack, running_slack
from tests.support.slack_app import OWNERS, PEOPLE, SECRET, App
from tests.support.waiting import eventually


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
