"""The seam where conversations reach the crew: mentions, DMs and `/kubecrew`, handed to a router.

`build_app(deps, client, router=...)` (kubecrew/channels/slack/app.py) takes any callable from an
`Incoming` message to the reply: plain text, or an `Answer` with Block Kit blocks. The crew's
router is `front_door_router`: the front door (kubecrew/channels/frontdoor.py) picks the agent and
keeps one LangGraph thread per `Incoming.conversation` (one Slack thread = one conversation), so a
follow-up in the thread keeps its context across restarts. Without a router the app does not
subscribe to messages at all.

Long work does not flood the thread: the first `Incoming.progress` call posts one "working on
it" message in the thread, later calls edit it (chat.update), and the reply replaces it. A
router that never reports progress gets exactly one message, its reply.

`/kubecrew <question>` posts the question as a new message in the channel and answers in its
thread, so a mention in that thread carries on the same conversation.

What reaches the router is data, not instructions: `person` is who the people file says the
Slack user is (None for an unknown account), never what the text claims, so whatever the router
does on that person's behalf is authorised by policy as that person. Bot messages (this app's
own included) are never routed, so two bots cannot talk each other into a loop.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
from slack_bolt import Ack, App
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from core.policy.proposals import Identity
from kubecrew.channels.slack.approvals_ui import escape
from kubecrew.channels.slack.clicks import allowed
from kubecrew.channels.slack.deps import SlackDeps

if TYPE_CHECKING:
    from kubecrew.channels.frontdoor import FrontDoor, Reply

log = logging.getLogger(__name__)
COMMAND = "/kubecrew"
_TEXT_LIMIT = 2900  # Slack refuses a section text over 3000 characters
_MAX_BLOCKS = 45  # of Slack's 50, leaving room for the footer


def _ignore(_step: str) -> None:
    return None


@dataclass(frozen=True)
class Incoming:
    channel: str
    user: str  # Slack user id
    person: Identity | None  # the people file's answer for `user`
    text: str
    conversation: str  # "CHANNEL:THREAD_TS": the thread the message starts or continues
    direct: bool  # a DM to the app rather than a mention in a channel
    progress: Callable[[str], None] = field(default=_ignore, compare=False, repr=False)


@dataclass(frozen=True)
class Answer:
    text: str  # the notification text (and what clients without blocks show)
    blocks: list[dict[str, Any]]


Router = Callable[[Incoming], str | Answer | None]  # the reply to post in the thread, or None


def route_messages(bolt: App, deps: SlackDeps, router: Router) -> None:
    """Subscribe to mentions, DMs and `/kubecrew`, and hand each to `router`."""

    def on_mention(event: dict[str, Any], client: WebClient) -> None:
        _handle(deps, client, router, event, direct=False)

    def on_message(event: dict[str, Any], client: WebClient) -> None:
        if event.get("channel_type") == "im":
            _handle(deps, client, router, event, direct=True)

    def on_command(ack: Ack, command: dict[str, Any], client: WebClient) -> None:
        text = str(command.get("text", "")).strip()
        if not text:
            ack(f"Ask the crew something, e.g. `{COMMAND} why is web failing?`, or "
                f"`{COMMAND} approvals`.")  # fmt: skip
            return
        ack()
        channel, user = str(command.get("channel_id", "")), str(command.get("user_id", ""))
        if not allowed(deps, channel=channel, user=user):
            return
        head = client.chat_postMessage(
            channel=channel, text=f"<@{user}> asked: {escape(text)}", unfurl_links=False
        )
        event = {"user": user, "channel": channel, "text": text, "ts": head["ts"]}
        _handle(deps, client, router, event, direct=False)

    bolt.event("app_mention")(on_mention)
    bolt.event("message")(on_message)
    bolt.command(COMMAND)(on_command)


class _Status:
    """One message in the thread that says what the work is doing, edited as it goes."""

    def __init__(self, client: WebClient, channel: str, thread: str) -> None:
        self.client, self.channel, self.thread = client, channel, thread
        self.ts: str | None = None
        self.steps: list[str] = []
        self._lock = threading.Lock()

    def update(self, step: str) -> None:
        with self._lock:
            self.steps.append(step)
            text = ":hourglass_flowing_sand: Working on it: " + ", ".join(self.steps[-6:])
            try:
                if self.ts is None:
                    posted = self.client.chat_postMessage(
                        channel=self.channel, thread_ts=self.thread, text=escape(text)
                    )
                    self.ts = str(posted["ts"])
                else:
                    self.client.chat_update(channel=self.channel, ts=self.ts, text=escape(text))
            except SlackApiError as exc:  # progress is a courtesy; the answer still comes
                log.warning("Slack refused a progress update: %s", exc.response.get("error"))

    def finish(self, reply: str | Answer) -> None:
        text, blocks = (
            (escape(reply), None) if isinstance(reply, str) else (reply.text, reply.blocks)
        )
        with self._lock:
            if self.ts is None:
                self.client.chat_postMessage(
                    channel=self.channel, thread_ts=self.thread, text=text, blocks=blocks
                )
            else:
                self.client.chat_update(channel=self.channel, ts=self.ts, text=text, blocks=blocks)


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
    status = _Status(client, channel, thread)
    incoming = Incoming(
        channel=channel,
        user=user,
        person=deps.people.by_account("slack", user),
        text=str(event.get("text", "")),
        conversation=f"{channel}:{thread}",
        direct=direct,
        progress=status.update,
    )
    reply = router(incoming)
    if reply:
        status.finish(reply)


def front_door_router(door: FrontDoor) -> Router:
    """The crew's router: each message through the front door, the reply as Block Kit."""

    def router(incoming: Incoming) -> Answer:
        async def go() -> Reply:
            return await door.handle(
                incoming.conversation, incoming.text, incoming.person, progress=incoming.progress
            )

        reply = anyio.run(go)
        return Answer(text=escape(reply.text.splitlines()[0] if reply.text else ""),
                      blocks=blocks(reply))  # fmt: skip

    return router


def blocks(reply: Reply) -> list[dict[str, Any]]:
    """The reply as Block Kit: the first line bold (the cause, or the outcome), each paragraph a
    section with its heading bold, links as links, and who answered in a footer."""
    paragraphs = [p for p in reply.text.split("\n\n") if p.strip()] or ["(no answer)"]
    head, *rest = paragraphs
    first, _, more = head.partition("\n")
    shown: list[dict[str, Any]] = [
        _section(f"*{escape(first)}*" + (f"\n{escape(more)}" if more else ""))
    ]
    for paragraph in rest:
        heading, sep, body = paragraph.partition("\n")
        if sep and heading.rstrip().endswith(":"):
            shown.append(_section(f"*{escape(heading)}*\n{escape(body)}"))
        else:
            shown.append(_section(escape(paragraph)))
    shown = shown[:_MAX_BLOCKS]
    links = [link for link in reply.report.get("links", []) if isinstance(link, dict)]
    if links:
        listed = "\n".join(f"<{link['url']}|{escape(str(link['title']))}>" for link in links)
        shown.append(_section(listed))
    footer = "kubecrew front door" if reply.agent is None else reply.agent.replace("_", " ")
    if reply.thread:
        footer += f" · thread `{reply.thread}`"
    shown.append({"type": "context", "elements": [{"type": "mrkdwn", "text": footer}]})
    return shown


def _section(text: str) -> dict[str, Any]:
    cut = text if len(text) <= _TEXT_LIMIT else text[: _TEXT_LIMIT - 1] + "…"
    return {"type": "section", "text": {"type": "mrkdwn", "text": cut}}
