"""A local server speaking the part of the Slack Web API the Slack app uses, and signed requests.

    with running_slack(bot_token="xoxb-test", channels={"C05H0PADM1"}) as slack:
        WebClient(token=..., base_url=slack.url) ...
        slack.calls("chat.postMessage")       # what the app sent, in order
        slack.messages[("C05H0PADM1", ts)]    # a message as it stands after updates

It is the network seam of the Slack app, faked the way Slack behaves: HTTP 200 with
`{"ok": false, "error": ...}` for a refused call (`not_authed`, `invalid_auth`,
`channel_not_found`, `message_not_found`), a bearer token per method (the bot token, or the
app-level token for apps.connections.open), arguments as JSON or as a form, and `ts` ids unique
per message. Methods: auth.test, chat.postMessage, chat.update, chat.postEphemeral,
apps.connections.open.

`post_signed` sends what Slack sends to an app in HTTP mode: the body signed with the signing
secret (X-Slack-Signature `v0=` HMAC-SHA256 of `v0:{timestamp}:{body}`, and
X-Slack-Request-Timestamp); `interaction` and `mention` build the payloads.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import httpx

Json = dict[str, Any]
TEAM, BOT_USER, APP = "T0KUBECREW", "U0KUBEBOT", "A0KUBECREW"


@dataclass
class Call:
    method: str
    args: Json


@dataclass
class FakeSlack:
    bot_token: str
    app_token: str
    channels: set[str]
    url: str = ""  # set once listening
    log: list[Call] = field(default_factory=list)
    messages: dict[tuple[str, str], Json] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _ts: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def calls(self, method: str) -> list[Json]:
        with self._lock:
            return [call.args for call in self.log if call.method == method]

    def handle(self, method: str, bearer: str | None, args: Json) -> Json:
        with self._lock:
            self.log.append(Call(method, args))
            expected = self.app_token if method == "apps.connections.open" else self.bot_token
            if not bearer:
                return {"ok": False, "error": "not_authed"}
            if bearer != expected:
                return {"ok": False, "error": "invalid_auth"}
            route = _ROUTES.get(method)
            if route is None:
                return {"ok": False, "error": "unknown_method"}
            return route(self, args)

    def _auth_test(self, args: Json) -> Json:
        return {
            "ok": True,
            "url": "https://kubecrew-test.slack.com/",
            "team": "kubecrew-test",
            "user": "kubecrew",
            "team_id": TEAM,
            "user_id": BOT_USER,
            "bot_id": "B0KUBEBOT",
            "is_enterprise_install": False,
        }

    def _post(self, args: Json) -> Json:
        channel = args.get("channel")
        if channel not in self.channels:
            return {"ok": False, "error": "channel_not_found"}
        ts = f"1765000000.{next(self._ts):06d}"
        message = {"type": "message", "ts": ts, "text": args.get("text", ""), **_blocks(args)}
        if args.get("thread_ts"):
            message["thread_ts"] = args["thread_ts"]
        self.messages[(channel, ts)] = message
        return {"ok": True, "channel": channel, "ts": ts, "message": message}

    def _update(self, args: Json) -> Json:
        key = (str(args.get("channel")), str(args.get("ts")))
        if key not in self.messages:
            return {"ok": False, "error": "message_not_found"}
        self.messages[key] = {**self.messages[key], "text": args.get("text", ""), **_blocks(args)}
        return {"ok": True, "channel": key[0], "ts": key[1], "text": args.get("text", "")}

    def _ephemeral(self, args: Json) -> Json:
        if args.get("channel") not in self.channels:
            return {"ok": False, "error": "channel_not_found"}
        return {"ok": True, "message_ts": f"1765000000.{next(self._ts):06d}"}

    def _connections_open(self, args: Json) -> Json:
        return {"ok": True, "url": "wss://127.0.0.1:1/link/?ticket=test"}


_ROUTES = {
    "auth.test": FakeSlack._auth_test,
    "chat.postMessage": FakeSlack._post,
    "chat.update": FakeSlack._update,
    "chat.postEphemeral": FakeSlack._ephemeral,
    "apps.connections.open": FakeSlack._connections_open,
}


def _blocks(args: Json) -> Json:
    blocks = args.get("blocks")
    if isinstance(blocks, str):  # form-encoded calls carry blocks as a JSON string
        blocks = json.loads(blocks)
    return {"blocks": blocks or []}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    slack: FakeSlack  # set on the subclass made per server

    def do_POST(self) -> None:
        split = urlsplit(self.path)
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        args: Json = dict(parse_qsl(split.query))
        if raw and "json" in (self.headers.get("Content-Type") or ""):
            args.update(json.loads(raw))
        elif raw:
            args.update(parse_qsl(raw.decode()))
        auth = self.headers.get("Authorization") or ""
        bearer = auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else args.get("token")
        method = split.path.rsplit("/", 1)[-1]
        payload = json.dumps(self.slack.handle(method, bearer, args)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read `FakeSlack.log` instead."""


@contextmanager
def running_slack(
    *,
    bot_token: str = "xoxb-test-bot-token",
    app_token: str = "xapp-test-app-token",
    channels: set[str] | None = None,
) -> Iterator[FakeSlack]:
    """A fake Slack Web API on a loopback port, at `slack.url` (the base URL, ending in /)."""
    slack = FakeSlack(bot_token=bot_token, app_token=app_token, channels=set(channels or ()))
    handler = type("Handler", (_Handler,), {"slack": slack})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    slack.url = f"http://127.0.0.1:{server.server_address[1]}/api/"
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-slack", daemon=True
    )
    thread.start()
    try:
        yield slack
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


# -- what Slack sends to the app ------------------------------------------------------------


def signature(secret: str, timestamp: str, body: bytes) -> str:
    base = b"v0:" + timestamp.encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def post_signed(
    url: str,
    body: bytes,
    *,
    secret: str,
    content_type: str,
    timestamp: int | None = None,
) -> httpx.Response:
    """POST `body` as Slack does, signed with `secret` at `timestamp` (default: now)."""
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    headers = {
        "Content-Type": content_type,
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": signature(secret, stamp, body),
    }
    return httpx.post(url, content=body, headers=headers, timeout=10)


def interaction(
    *, user: str, channel: str, ts: str, action_id: str, value: str, response_url: str
) -> bytes:
    """A block_actions payload for a button click, form-encoded as `payload=` like Slack's."""
    payload = {
        "type": "block_actions",
        "user": {"id": user, "username": user.lower(), "team_id": TEAM},
        "api_app_id": APP,
        "token": "legacy-verification-token-unused",
        "container": {"type": "message", "message_ts": ts, "channel_id": channel},
        "trigger_id": "1111.2222.3333",
        "team": {"id": TEAM, "domain": "kubecrew-test"},
        "channel": {"id": channel, "name": "owners"},
        "message": {"type": "message", "ts": ts, "text": ""},
        "response_url": response_url,
        "actions": [
            {
                "type": "button",
                "action_id": action_id,
                "block_id": "kubecrew-approval",
                "value": value,
                "action_ts": f"{time.time():.6f}",
            }
        ],
    }
    return urlencode({"payload": json.dumps(payload)}).encode()


def mention(*, user: str, channel: str, ts: str, text: str, thread_ts: str | None = None) -> bytes:
    """An Events API event_callback for an app_mention, as JSON."""
    event: Json = {
        "type": "app_mention",
        "user": user,
        "text": text,
        "ts": ts,
        "channel": channel,
        "event_ts": ts,
    }
    if thread_ts is not None:
        event["thread_ts"] = thread_ts
    body = {
        "token": "legacy-verification-token-unused",
        "team_id": TEAM,
        "api_app_id": APP,
        "event": event,
        "type": "event_callback",
        "event_id": f"Ev{ts.replace('.', '')}",
        "event_time": int(time.time()),
        "authorizations": [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True}],
    }
    return json.dumps(body).encode()
