"""One Slack message per incident, kept up to date while the crew handles it.

`IncidentMessages.handler` wraps what the watcher's desk calls for a new (or re-opened) incident:
it posts one message to the owners' channel of the incident's workload (the same Ownership
`spec.slack` approvals go to, else `kubecrew watch --slack-channel`), then edits that message
(chat.update) as the handling moves through the remediation loop's nodes - learn, recommend,
mutate, validate - and once more when it ends: healed, escalated, diagnosed, or failed. Ten
signals of one incident are one handling (the desk merges them), so one message and its updates.
The handler is `Resolving` (agents/runtime/notify/desk.py): when the incident is resolved
by anything else (its alert resolved, the patrol finding the workload healthy after `kubecrew
heal` or a person's fix), the message is edited once more to say so and why.

Which message shows which incident opening is kept in the Slack app's ledger (`ledger.Ledger`,
keyed `incident:FINGERPRINT#OPENING`), so a watcher restarted mid-handling edits the message it
posted before instead of posting again, and an incident that was resolved and came back (its
opening count goes up) gets a message of its own.

Slack refusing a call costs the message, never the handling: it is logged and the handler goes
on. What the cluster said (summaries, answers) is shown as plain text, never as markup, and
anything that looks like a token is masked before it leaves.
"""

from __future__ import annotations

import logging
import math
import os
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, cast

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from agents.dev_team.incidents import heal_incident
from agents.runtime.loop.validation import LoopSettings
from agents.runtime.notify.desk import Handler, HandlerResult
from agents.runtime.notify.incidents import Incident
from agents.runtime.toolbox import Servers
from core.errors import ToolError
from core.policy.actions import Action, EvaluationRequest
from core.policy.actions import TargetRef as Subject
from core.policy.catalog import PolicySet
from core.policy.documents.priority import Ownership
from core.policy.evaluation import stakeholders
from kubecrew.channels.slack.app import connect
from kubecrew.channels.slack.ledger import FILE_NAME, Post, open_ledger
from kubecrew.channels.slack.owners import load_policies
from kubecrew.channels.slack.settings import BOT_TOKEN_ENV, Credentials, SetupError, SlackSettings

log = logging.getLogger(__name__)

Stage = Literal[
    "opened", "learning", "recommending", "changing", "waiting for approval", "validating",
    "rolling back", "healed", "escalated", "diagnosed", "failed", "resolved",
]  # fmt: skip
OnNode = Callable[[str], None]
# A handler that reports the loop nodes it passes through (`heal(..., on_node=...)`).
Stepped = Callable[[Incident, OnNode], Awaitable[HandlerResult]]

_STAGE_OF_NODE: Mapping[str, Stage] = {
    "learn": "learning",
    "recommend": "recommending",
    "plan": "changing",
    "decide": "changing",
    "approval": "waiting for approval",
    "mutate": "changing",
    "validate": "validating",
    "rollback": "rolling back",
}
_ICONS: Mapping[Stage, str] = {
    "healed": ":white_check_mark:",
    "resolved": ":white_check_mark:",
    "escalated": ":raising_hand:",
    "diagnosed": ":mag:",
    "failed": ":x:",
}
_TOKENS = re.compile(r"(xox[a-z]-|xapp-)[A-Za-z0-9-]+|(?i:bearer)\s+\S+")
_LIMIT = 2900  # a section's text may hold 3000 characters


def stepped(handler: Handler) -> Stepped:
    """A handler that reports no steps (the diagnosis): its message shows opened, then the end."""

    async def handle(incident: Incident, on_node: OnNode) -> HandlerResult:
        return await handler(incident)

    return handle


def healing(
    servers: Servers, *, home: Path | None = None, settings: LoopSettings | None = None
) -> Stepped:
    """The remediation loop as a stepped handler: `heal` reports each node it runs."""

    async def handle(incident: Incident, on_node: OnNode) -> HandlerResult:
        return await heal_incident(
            incident, servers=servers, home=home, settings=settings, on_node=on_node
        )

    return handle


def open_messages(
    channel: str | None,
    *,
    api_url: str,
    incidents: Path,
    policies: tuple[Path, ...] = (),
    environ: Mapping[str, str] = os.environ,
) -> IncidentMessages:
    """What `kubecrew watch --slack-channel` posts with: the bot token from $SLACK_BOT_TOKEN,
    checked with Slack (auth.test) before watching starts; SetupError says what to fix."""
    token = environ.get(BOT_TOKEN_ENV, "").strip()
    if not token.startswith("xoxb-"):
        raise SetupError(
            f"${BOT_TOKEN_ENV} must hold your Slack app's bot token (xoxb-...) to post incidents; "
            f"export it, or run `kubecrew watch` without --slack-channel"
        )
    settings = SlackSettings(mode="http", credentials=Credentials(bot_token=token), api_url=api_url)
    client, _ = connect(settings)
    return IncidentMessages(
        client,
        ledger=incidents.parent / FILE_NAME,
        policies=load_policies(policies, environ),
        channel=channel,
    )


@dataclass(frozen=True)
class View:
    """What one incident's message shows now."""

    incident: Incident
    stage: Stage
    passed: tuple[Stage, ...] = ()
    answer: str = ""


class IncidentMessages:
    def __init__(
        self,
        client: WebClient,
        *,
        ledger: Path,
        policies: PolicySet,
        channel: str | None,
    ) -> None:
        self.client, self.ledger, self.policies, self.channel = client, ledger, policies, channel
        self._secret = client.token or ""

    def handler(self, handling: Stepped) -> Handler:
        """The desk's handler: shows each handling as it goes, and (as `Resolving`) each
        resolution, from wherever it came."""
        return _Shown(self, handling)

    async def handle(self, incident: Incident, handling: Stepped) -> HandlerResult:
        """One handling's message, from "opened" to how it ended."""
        progress = _Progress(self, View(incident, "opened"))
        await self.show(progress.view)
        nodes, seen = anyio.create_memory_object_stream[str](math.inf)
        failure: Exception | None = None
        result = HandlerResult("")
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(progress.follow, seen)
            with nodes:
                try:
                    result = await handling(incident, nodes.send_nowait)
                except Exception as exc:  # shown, then raised to the desk as it was
                    failure = exc
        if failure is not None:
            await progress.end("failed", str(failure))
            raise failure
        if result.resolved:
            await progress.end("healed", result.answer)
        elif progress.view.stage in ("escalated", "waiting for approval"):
            await progress.end(progress.view.stage, result.answer)
        else:
            await progress.end("diagnosed", result.answer)
        return result

    async def resolved(self, incident: Incident, why: str) -> None:
        """Say on the incident's message that it is resolved, unless it already says healed."""
        try:
            await anyio.to_thread.run_sync(self._resolve, incident, why)
        except SlackApiError as exc:
            log.warning(
                "incident %s not shown resolved in Slack (%s)",
                incident.fingerprint,
                exc.response.get("error", "error"),
            )
        except (SlackClientError, ToolError) as exc:
            log.warning("incident %s not shown resolved in Slack (%s)", incident.fingerprint, exc)

    def _resolve(self, incident: Incident, why: str) -> None:
        key = f"incident:{incident.fingerprint}#{incident.opened}"
        ledger = open_ledger(self.ledger)
        try:
            post = ledger.get(key)
            if post is None or post.state in ("healed", "resolved"):
                return  # never shown (nothing to correct), or it says so already
            view = View(incident, "resolved", (cast(Stage, post.state),), f"Resolved: {why}")
            self.client.chat_update(channel=post.channel, ts=post.ts, **self.message(view))
            ledger.shown(key, state="resolved", answers=incident.count)
        finally:
            ledger.close()

    async def show(self, view: View) -> None:
        try:
            await anyio.to_thread.run_sync(self._send, view)
        except SlackApiError as exc:
            log.warning(
                "incident %s not shown in Slack (%s)",
                view.incident.fingerprint,
                exc.response.get("error", "error"),
            )
        except (SlackClientError, ToolError) as exc:  # Slack unreachable, or the ledger
            log.warning("incident %s not shown in Slack (%s)", view.incident.fingerprint, exc)

    def _send(self, view: View) -> None:
        """Post the opening's message, or edit the one the ledger knows (on this thread)."""
        key = f"incident:{view.incident.fingerprint}#{view.incident.opened}"
        shown = self.message(view)
        ledger = open_ledger(self.ledger)
        try:
            post = ledger.get(key)
            if post is None:
                channel = self.channel_for(view.incident)
                if channel is None:
                    log.warning(
                        "incident %s: no Slack channel; give its owner's Ownership `spec.slack`, "
                        "or run `kubecrew watch --slack-channel CHANNEL_ID`",
                        view.incident.fingerprint,
                    )
                    return
                sent = self.client.chat_postMessage(channel=channel, **shown)
                where, ts = str(sent["channel"]), str(sent["ts"])
                ledger.posted(Post(key, where, ts, view.stage, view.incident.count))
                return
            if post.state == "resolved":
                return  # resolved meanwhile, by someone else: that stays the last word
            self.client.chat_update(channel=post.channel, ts=post.ts, **shown)
            ledger.shown(key, state=view.stage, answers=view.incident.count)
        finally:
            ledger.close()

    def channel_for(self, incident: Incident) -> str | None:
        """The owners' channel of the incident's subject (as `owners.channel_for`), else ours."""
        target = Subject(kind=incident.kind, name=incident.name, namespace=incident.namespace)
        asked = EvaluationRequest(action=Action(type="patch", target=target), now=datetime.now(UTC))
        owner = next((s for s in stakeholders(self.policies, asked) if s.owner), None)
        if owner is not None:
            ownership = self.policies.get(owner.ownership, kind="Ownership").document
            if isinstance(ownership, Ownership) and ownership.spec.slack is not None:
                return ownership.spec.slack
        return self.channel

    def message(self, view: View) -> dict[str, Any]:
        incident = view.incident
        icon = _ICONS.get(view.stage, ":rotating_light:")
        again = f" (opened {incident.opened} times)" if incident.opened > 1 else ""
        steps = " → ".join([*view.passed, view.stage])
        blocks: list[dict[str, Any]] = [
            _text("mrkdwn", f"{icon} *{_escape(incident.subject)}*: {view.stage}{again}"),
            _text("plain_text", self._clean(incident.summary)),
            {
                "type": "context",
                "elements": [
                    {
                        "type": "mrkdwn",
                        "text": f"`{_escape(incident.fingerprint)}` · {incident.count} signals · "
                        f"from {incident.source} · {steps}",
                    }
                ],
            },
        ]
        if view.answer:
            blocks.append(_text("plain_text", self._clean(view.answer)))
        text = f"{view.stage}: {self._clean(incident.subject)}{again}"
        return {"text": text, "blocks": blocks}

    def _clean(self, text: str) -> str:
        if self._secret:
            text = text.replace(self._secret, "[token]")
        text = _TOKENS.sub("[token]", text)
        return text if len(text) <= _LIMIT else text[: _LIMIT - 1] + "…"


class _Shown:
    """The handler the desk calls (`Resolving`): each handling, and each resolution, shown."""

    def __init__(self, messages: IncidentMessages, handling: Stepped) -> None:
        self.messages, self.handling = messages, handling

    async def __call__(self, incident: Incident) -> HandlerResult:
        return await self.messages.handle(incident, self.handling)

    async def resolved(self, incident: Incident, why: str) -> None:
        await self.messages.resolved(incident, why)


class _Progress:
    """One handling's message as it moves on; each handling has its own (they run at once)."""

    def __init__(self, messages: IncidentMessages, view: View) -> None:
        self.messages, self.view = messages, view

    async def follow(self, seen: MemoryObjectReceiveStream[str]) -> None:
        async with seen:
            async for node in seen:
                stage = "escalated" if node == "escalate" else _STAGE_OF_NODE.get(node)
                if stage is not None and stage != self.view.stage:
                    await self.end(stage)

    async def end(self, stage: Stage, answer: str = "") -> None:
        passed = (*self.view.passed, self.view.stage) if stage != self.view.stage else ()
        self.view = View(self.view.incident, stage, passed or self.view.passed, answer)
        await self.messages.show(self.view)


def _text(kind: Literal["mrkdwn", "plain_text"], text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": kind, "text": text or " "}}


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
