"""The Slack app in Socket Mode, for real: it asks the Web API for a WebSocket URL with its
app-level token, connects, and answers a mention pushed as an Events API envelope, acking the
envelope; a wrong app-level token is one clear line at startup."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.policy.people import load_people
from core.policy.store.sqlite import SqliteStore
from kubecrew.channels.slack.app import SlackService, connect
from kubecrew.channels.slack.conversation import Incoming
from kubecrew.channels.slack.deps import SlackDeps
from kubecrew.channels.slack.ledger import ledger_path
from kubecrew.channels.slack.owners import load_policies
from kubecrew.channels.slack.settings import Credentials, SetupError, SlackSettings
from tests.kubecrew.channels.slack.socket_mode import (
    SocketMode,
    SocketSlack,
    events_api,
    running_socket_mode,
)
from tests.support.slack import mention
from tests.support.slack_app import OWNERS, PEOPLE
from tests.support.waiting import eventually


@pytest.fixture
def world() -> Iterator[tuple[SocketSlack, SocketMode]]:
    with running_socket_mode(channels={OWNERS}) as both:
        yield both


def service(slack: SocketSlack, tmp_path: Path, *, app_token: str) -> SlackService:
    people = tmp_path / "people.yaml"
    people.write_text(PEOPLE)
    store = tmp_path / "policy" / "store.sqlite"
    settings = SlackSettings(
        mode="socket",
        credentials=Credentials(bot_token=slack.bot_token, app_token=app_token),
        api_url=slack.url,
        store=str(store),
        people=people,
        channel=OWNERS,
        poll=0.2,
    )
    deps = SlackDeps(
        settings=settings,
        people=load_people(people),
        policies=load_policies(),
        open_store=lambda: SqliteStore(store),
        ledger_path=ledger_path(str(store)),
    )
    client, _ = connect(settings)

    def router(incoming: Incoming) -> str:
        name = incoming.person.name if incoming.person else "stranger"
        return f"heard you over the socket, {name}"

    return SlackService(deps, client, router=router)


def test_a_mention_over_the_socket_is_acked_and_answered_in_its_thread(
    world: tuple[SocketSlack, SocketMode], tmp_path: Path
) -> None:
    slack, socket = world
    app = service(slack, tmp_path, app_token=slack.app_token)
    stop, ready = threading.Event(), threading.Event()
    running = threading.Thread(
        target=app.serve_socket, kwargs={"stop": stop, "on_ready": ready.set}, daemon=True
    )
    running.start()
    try:
        assert ready.wait(15) and socket.connected.wait(15)
        assert len(slack.calls("apps.connections.open")) == 1  # with the app-level token
        asked = mention(
            user="U0ALICE", channel=OWNERS, ts="1765000200.000100", text="<@U0KUBEBOT> hello?"
        )
        envelope = socket.send(events_api(asked))
        (ack,) = eventually(lambda: socket.acked(envelope), timeout=10, what="the envelope acked")
        assert ack == {"envelope_id": envelope}
        (reply,) = eventually(
            lambda: [c for c in slack.calls("chat.postMessage") if c.get("thread_ts")],
            timeout=10,
            what="the reply in the thread",
        )
        assert (reply["channel"], reply["thread_ts"]) == (OWNERS, "1765000200.000100")
        assert reply["text"] == "heard you over the socket, alice"
    finally:
        stop.set()
        running.join(timeout=15)
    assert not running.is_alive()


def test_a_wrong_app_token_is_refused_at_startup_in_one_line(
    world: tuple[SocketSlack, SocketMode], tmp_path: Path
) -> None:
    slack, socket = world
    app = service(slack, tmp_path, app_token="xapp-1-not-the-apps-token")
    with pytest.raises(SetupError, match=r"Slack refused \$SLACK_APP_TOKEN .*invalid_auth"):
        app.serve_socket(stop=threading.Event(), on_ready=lambda: None)
    assert not socket.connected.is_set()
