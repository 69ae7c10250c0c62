"""What `kubecrew slack` runs with: Slack credentials from the environment, and its options.

Secrets (the bot token, the signing secret, the app-level token) come only from the environment,
never from flags (which `ps` shows) nor files the app writes; they are kept out of `repr` so a
logged settings object cannot leak them. `credentials` checks what can be checked without the
network (presence, and the token prefixes Slack gives each kind) and raises `SetupError` with one
line that names the variable and what to do; whether Slack accepts the token is `app.connect`'s
check (auth.test), made before anything is served.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from core.errors import InvalidArgument

BOT_TOKEN_ENV, SIGNING_SECRET_ENV, APP_TOKEN_ENV = (
    "SLACK_BOT_TOKEN",
    "SLACK_SIGNING_SECRET",
    "SLACK_APP_TOKEN",
)
SLACK_API_URL = "https://slack.com/api/"
EVENTS_PATH = "/slack/events"
Mode = Literal["socket", "http"]


class SetupError(InvalidArgument):
    """`kubecrew slack` cannot start: a credential or option is missing or wrong."""


@dataclass(frozen=True)
class Credentials:
    """The secrets, never shown: `repr` hides them, and nothing writes them anywhere."""

    bot_token: str = field(repr=False)
    signing_secret: str | None = field(default=None, repr=False)  # http mode
    app_token: str | None = field(default=None, repr=False)  # socket mode


@dataclass(frozen=True)
class SlackSettings:
    mode: Mode
    credentials: Credentials
    api_url: str = SLACK_API_URL  # the Web API base; tests point it at a local server
    host: str = "127.0.0.1"
    port: int = 3000
    store: str | None = None  # a policy store spec, as `--store` takes it
    people: Path | None = None
    policies: tuple[Path, ...] = ()
    channel: str | None = None  # where requests go when no Ownership names a channel
    allow: Mapping[str, frozenset[str]] = field(default_factory=dict)  # channel -> user ids
    poll: float = 3.0  # seconds between two looks at the store's pending requests

    def __post_init__(self) -> None:
        if not self.api_url.endswith("/"):  # the Web API client joins method names onto it
            object.__setattr__(self, "api_url", self.api_url + "/")
        if self.poll <= 0:
            raise SetupError(f"--poll {self.poll:g}: give a positive number of seconds")


def credentials(mode: Mode, environ: Mapping[str, str] = os.environ) -> Credentials:
    """The secrets `mode` needs, from the environment; SetupError names what is missing."""
    bot_token = _secret(environ, BOT_TOKEN_ENV, prefix="xoxb-", what="the bot token (OAuth)")
    if mode == "http":
        secret = _secret(environ, SIGNING_SECRET_ENV, prefix="", what="the app's signing secret")
        return Credentials(bot_token=bot_token, signing_secret=secret)
    app_token = _secret(environ, APP_TOKEN_ENV, prefix="xapp-", what="an app-level token")
    return Credentials(bot_token=bot_token, app_token=app_token)


def parse_allow(entries: list[str]) -> dict[str, frozenset[str]]:
    """`C0123=U1,U2` entries as channel -> the only users who may act in that channel."""
    allowed: dict[str, frozenset[str]] = {}
    for entry in entries:
        channel, sep, users = entry.partition("=")
        named = frozenset(user.strip() for user in users.split(",") if user.strip())
        if not sep or not channel.strip() or not named:
            raise SetupError(
                f"--allow {entry!r}: give CHANNEL_ID=USER_ID[,USER_ID...], e.g. C0123=U024BE7LH"
            )
        allowed[channel.strip()] = allowed.get(channel.strip(), frozenset()) | named
    return allowed


def _secret(environ: Mapping[str, str], name: str, *, prefix: str, what: str) -> str:
    value = environ.get(name, "").strip()
    if not value:
        raise SetupError(
            f"${name} is not set: export {what} from your Slack app's settings "
            f"(see the README's Slack section)"
        )
    if prefix and not value.startswith(prefix):
        raise SetupError(
            f"${name} does not start with {prefix!r}: it must hold {what}, not another kind of "
            f"Slack token"
        )
    return value
