"""Slack's Socket Mode, served locally: the WebSocket end Slack gives an app, and the Web API
that hands out its URL.

    with running_socket_mode(channels={...}) as (slack, socket):
        SlackService(...).serve_socket(...)    # apps.connections.open -> socket.url (ws://)
        socket.send(events_api(mention(...)))  # an envelope, as Slack pushes one
        socket.acked(envelope_id)              # the app's ack, by envelope id

Socket Mode as Slack speaks it: the app calls apps.connections.open with its app-level token
and gets a WebSocket URL; on connecting, the server says `hello`; each event, command or
interaction arrives as an envelope (`envelope_id`, `type`, `payload`), and the app answers each
with `{"envelope_id": ...}` within three seconds. The Web API is the shared fake
(tests/support/slack.py), whose apps.connections.open here returns this server's `ws://` URL
(a port other than 443 is a plain socket for Slack's own client, as it is here).
"""

from __future__ import annotations

import contextlib
import json
import queue
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import Any

from websockets.exceptions import ConnectionClosed
from websockets.sync.server import ServerConnection, serve

from tests.support.slack import APP, FakeSlack, _Handler

Json = dict[str, Any]


class SocketMode:
    """The WebSocket end: `hello` on each connection, envelopes pushed in order, acks kept."""

    def __init__(self) -> None:
        self._server = serve(self._session, "127.0.0.1", 0)
        port = self._server.socket.getsockname()[1]
        self.url = f"ws://127.0.0.1:{port}/link/?ticket=kubecrew-test-ticket"
        self.acks: list[Json] = []
        self.connected = threading.Event()
        self._outbox: queue.Queue[str] = queue.Queue()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def send(self, envelope: Json) -> str:
        self._outbox.put(json.dumps(envelope))
        return str(envelope["envelope_id"])

    def acked(self, envelope_id: str) -> list[Json]:
        with self._lock:
            return [ack for ack in self.acks if ack.get("envelope_id") == envelope_id]

    def _session(self, connection: ServerConnection) -> None:
        hello = {
            "type": "hello",
            "num_connections": 1,
            "debug_info": {"host": "kubecrew-test", "approximate_connection_time": 18060},
            "connection_info": {"app_id": APP},
        }
        connection.send(json.dumps(hello))
        self.connected.set()
        try:
            while not self._stop.is_set():
                with contextlib.suppress(TimeoutError):  # nothing said: send what is queued
                    said = connection.recv(timeout=0.05)
                    with self._lock:
                        self.acks.append(json.loads(said))
                while not self._outbox.empty():
                    connection.send(self._outbox.get())
        except ConnectionClosed:
            return

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._server.shutdown()
        self._thread.join(timeout=5)


def events_api(body: bytes) -> Json:
    """An Events API envelope carrying `body` (an event_callback, as `mention` builds it)."""
    return {
        "envelope_id": str(uuid.uuid4()),
        "type": "events_api",
        "accepts_response_payload": False,
        "retry_attempt": 0,
        "retry_reason": "",
        "payload": json.loads(body),
    }


@dataclass
class SocketSlack(FakeSlack):
    """The shared Web API fake, whose apps.connections.open hands out `socket_url`."""

    socket_url: str = field(default="")

    def handle(self, method: str, bearer: str | None, args: Json) -> Json:
        answer = super().handle(method, bearer, args)
        if method == "apps.connections.open" and answer.get("ok"):
            return {**answer, "url": self.socket_url}
        return answer


@contextmanager
def running_socket_mode(
    *,
    channels: set[str],
    bot_token: str = "xoxb-test-bot-token",
    app_token: str = "xapp-1-A0KUBECREW-test-app-token",
) -> Iterator[tuple[SocketSlack, SocketMode]]:
    socket = SocketMode()
    slack = SocketSlack(
        bot_token=bot_token, app_token=app_token, channels=set(channels), socket_url=socket.url
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("Handler", (_Handler,), {"slack": slack}))
    server.daemon_threads = True
    slack.url = f"http://127.0.0.1:{server.server_address[1]}/api/"
    web = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    web.start()
    socket.start()
    try:
        yield slack, socket
    finally:
        socket.stop()
        server.shutdown()
        server.server_close()
        web.join(timeout=5)
