"""The seam where conversations reach the crew: mentions and direct messages, handed to a router.

This slice of `kubecrew slack` does approvals; talking to the agents needs their runtime, which
plugs in here as a `Router`: `build_app(deps, client, router=...)` (kubecrew/slack/app.py) takes
any callable from an `Incoming` message to the reply text. The front door that picks the agent,
and the LangGraph thread keyed by `Incoming.conversation` (one Slack thread = one conversation,
so a follow-up in the thread keeps its context across restarts), live behind that callable.
Without a router the app does not subscribe to messages at all.

What reaches the router is data, not instructions: `person` is who the people file says the
Slack user is (None for an unknown account), never what the text claims, so whatever the router
does on that person's behalf is authorised by policy as that person. Bot messages (this app's
own included) are never routed, so two bots cannot talk each other into a loop.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from slack_bolt import App
from slack_sdk import WebClient

from kubecrew.slack.approvals_ui import escape
from kubecrew.slack.clicks import allowed
from kubecrew.slack.deps import SlackDeps
from mcp_servers.policy.proposals import Identity

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Incoming:
    channel: str
    user: str  # Slack user id
    person: Identity | None  # the people file's answer for `user`
    text: str
    conversation: str  # "CHANNEL:THREAD_TS": the thread the message starts or continues
    direct: bool  # a DM to the app rather than a mention in a channel


Router = Callable[[Incoming], str | None]  # the reply to post in the thread, or None


def route_messages(bolt: App, deps: SlackDeps, router: Router) -> None:
    """Subscribe to mentions and DMs and hand each to `router`, replying in its thread."""

    def on_mention(event: dict[str, Any], client: WebClient) -> None:
        _handle(deps, client, router, event, direct=False)

    def on_message(event: dict[str, Any], client: WebClient) -> None:
        if event.get("channel_type") == "im":
            _handle(deps, client, router, event, direct=True)

    bolt.event("app_mention")(on_mention)
    bolt.event("message")(on_message)


def _handle(
    deps: SlackDeps,
    client: WebClient,
    router: Router,
    event: Mapping[str, Any],
    *,
    direct: bool,
) -> None:
    if event.get("bot_id") or event.get("subtype"):
        return  # bots, edits, joins: nothing a person asked
    user, channel = str(event.get("user", "")), str(event.get("channel", ""))
    thread = str(event.get("thread_ts") or event.get("ts") or "")
    if not allowed(deps, channel=channel, user=user):
        log.info("ignored a message from %s in %s: not on the channel's allow-list", user, channel)
        return
    incoming = Incoming(
        channel=channel,
        user=user,
        person=deps.people.by_account("slack", user),
        text=str(event.get("text", "")),
        conversation=f"{channel}:{thread}",
        direct=direct,
    )
    reply = router(incoming)
    if reply:
        client.chat_postMessage(channel=channel, thread_ts=thread, text=escape(reply))
