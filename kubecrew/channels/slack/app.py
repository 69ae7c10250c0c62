"""The Bolt app behind `kubecrew slack`, and the two ways Slack reaches it.

`connect` checks the bot token with Slack (auth.test) before anything is served, so a wrong
token is one line at startup rather than a failure on the first click. `build_app` makes the
Bolt `App`: Approve / Deny actions (`clicks`), and the conversation seam (`conversation`) when a
router is given. `SlackService` runs it with the poster (`posts`):

- HTTP events mode (`serve_http`): Slack POSTs events and interactions to `/slack/events`; Bolt
  verifies each request's signature and timestamp with the signing secret (a bad or stale one is
  answered 401 and nothing runs). Served by uvicorn through Bolt's ASGI adapter, on a socket bound
  up front so `--port 0` works and the address is known before the first request.
- Socket Mode (`serve_socket`): the app dials out to Slack with the app-level token; no public URL.

Listeners acknowledge first and work after (Bolt's default), so Slack never waits on the store.
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Callable
from typing import Any

import uvicorn
from slack_bolt import Ack, App
from slack_bolt.adapter.asgi import SlackRequestHandler
from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from core.policy.proposals import AnswerVerdict
from kubecrew.channels.slack import approvals_ui, clicks
from kubecrew.channels.slack.conversation import Router, route_messages
from kubecrew.channels.slack.deps import SlackDeps
from kubecrew.channels.slack.posts import Poster
from kubecrew.channels.slack.settings import (
    APP_TOKEN_ENV,
    BOT_TOKEN_ENV,
    EVENTS_PATH,
    SetupError,
    SlackSettings,
)

log = logging.getLogger(__name__)


def connect(settings: SlackSettings) -> tuple[WebClient, dict[str, Any]]:
    """A Web API client for the bot token, and Slack's auth.test answer for it; SetupError
    saying what to fix when Slack refuses the token or cannot be reached."""
    client = WebClient(token=settings.credentials.bot_token, base_url=settings.api_url)
    try:
        who = client.auth_test()
    except SlackApiError as exc:
        raise SetupError(
            f"Slack refused ${BOT_TOKEN_ENV} (auth.test: {exc.response.get('error')}): copy the "
            f"Bot User OAuth Token from your app's OAuth & Permissions page"
        ) from exc
    except (SlackClientError, OSError) as exc:
        raise SetupError(
            f"cannot reach the Slack Web API at {settings.api_url} ({type(exc).__name__}); "
            f"check the network, or --api-url"
        ) from exc
    return client, dict(who.data) if isinstance(who.data, dict) else {}


def build_app(deps: SlackDeps, client: WebClient, *, router: Router | None = None) -> App:
    http = deps.settings.mode == "http"
    bolt = App(
        client=client,
        signing_secret=deps.settings.credentials.signing_secret or "",
        request_verification_enabled=http,  # Socket Mode requests come over the app's own socket
        token_verification_enabled=False,  # `connect` did, with a clearer message
    )

    def on_click(verdict: AnswerVerdict) -> Callable[[Ack, dict[str, Any], WebClient], None]:
        def listener(ack: Ack, body: dict[str, Any], client: WebClient) -> None:
            ack()
            clicks.handle(deps, client, clicks.Click.from_body(body), verdict)

        return listener

    bolt.action(approvals_ui.GRANT)(on_click("grant"))
    bolt.action(approvals_ui.DENY)(on_click("deny"))
    if router is not None:
        route_messages(bolt, deps, router)
    return bolt


class HttpServer:
    """uvicorn serving Bolt at `EVENTS_PATH` on a socket bound when this is made."""

    def __init__(self, bolt: App, *, host: str, port: int) -> None:
        try:
            self._socket = socket.create_server((host, port))
        except OSError as exc:
            raise SetupError(
                f"cannot listen on {host}:{port} ({exc.strerror}); try --port"
            ) from exc
        bound = self._socket.getsockname()[1]
        self.url = f"http://{host}:{bound}{EVENTS_PATH}"
        config = uvicorn.Config(
            SlackRequestHandler(bolt, path=EVENTS_PATH), log_level="warning", access_log=False
        )
        self._server = uvicorn.Server(config)

    @property
    def started(self) -> bool:
        return bool(self._server.started)

    def run(self) -> None:
        self._server.run(sockets=[self._socket])

    def stop(self) -> None:
        self._server.should_exit = True


class SlackService:
    """The Bolt app and the poster, run together in one of the two modes."""

    def __init__(self, deps: SlackDeps, client: WebClient, *, router: Router | None = None):
        self.deps, self.client = deps, client
        self.bolt = build_app(deps, client, router=router)
        self.poster = Poster(deps, client)

    def http_server(self) -> HttpServer:
        settings = self.deps.settings
        return HttpServer(self.bolt, host=settings.host, port=settings.port)

    def serve_http(self, server: HttpServer) -> None:
        """Serve until `server.stop()` (or Ctrl-C in the main thread); the poster runs alongside."""
        self.poster.start()
        try:
            server.run()
        finally:
            self.poster.stop()

    def serve_socket(self, *, stop: threading.Event, on_ready: Callable[[], None]) -> None:
        """Hold a Socket Mode connection until `stop` is set; SetupError if Slack refuses it."""
        handler = SocketModeHandler(self.bolt, self.deps.settings.credentials.app_token)
        try:
            handler.connect()  # type: ignore[no-untyped-call]  # untyped in slack_bolt
        except SlackApiError as exc:
            raise SetupError(
                f"Slack refused ${APP_TOKEN_ENV} (apps.connections.open: "
                f"{exc.response.get('error')}): create an app-level token with the "
                f"connections:write scope, and turn Socket Mode on in the app's settings"
            ) from exc
        self.poster.start()
        on_ready()
        try:
            stop.wait()
        finally:
            self.poster.stop()
            handler.close()  # type: ignore[no-untyped-call]
