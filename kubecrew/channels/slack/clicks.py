"""A click on Approve or Deny: who clicked, may they, and what the store says after.

Bolt has verified the request came from Slack (signature and timestamp) before this runs, so the
Slack user id in it is Slack's word. Who that user is, for policy, is the people file's word
(`People.by_account("slack", ...)`): an unknown account is nobody. Whether that person may answer
is `approvals.answer`'s decision, the same as in every other channel; this module only turns the
outcome into Slack: the shared message updated for everyone, or an ephemeral reply to the one
person saying why their click was not taken. A channel's allow-list (`--allow`) is checked first:
outside it nobody's click counts, whoever they are. The button carries only the request id; the
message it was on must be the one the ledger keeps for that request.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from core.errors import Conflict, NotFound, PermissionDenied, ToolError
from core.policy import approvals
from core.policy.proposals import AnswerVerdict
from core.policy.store.base import Store
from kubecrew.channels.slack import approvals_ui
from kubecrew.channels.slack.deps import SlackDeps
from kubecrew.channels.slack.ledger import Ledger, Post
from kubecrew.channels.slack.posts import show

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Click:
    user: str  # Slack user id
    channel: str
    ts: str  # the message the button was on
    request: str  # the approval request id the button carries

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> Click:
        container = body.get("container") or {}
        channel = (body.get("channel") or {}).get("id") or container.get("channel_id") or ""
        (action,) = body["actions"]
        return cls(
            user=str(body["user"]["id"]),
            channel=str(channel),
            ts=str(container.get("message_ts") or (body.get("message") or {}).get("ts") or ""),
            request=str(action["value"]),
        )


def allowed(deps: SlackDeps, *, channel: str, user: str) -> bool:
    """Whether `user` may act in `channel`: yes, unless its allow-list leaves them out."""
    listed = deps.settings.allow.get(channel)
    return listed is None or user in listed


def handle(deps: SlackDeps, client: WebClient, click: Click, verdict: AnswerVerdict) -> None:
    """Answer the request for the clicking person, then update or explain (see the module)."""
    try:
        refused = _refusal(deps, client, click, verdict)
        if refused is not None:
            _tell(client, click, refused)
    except SlackApiError as exc:  # the store has the answer; the poster updates the message
        log.warning("Slack refused a reply about %s: %s", click.request, exc.response.get("error"))


def _refusal(
    deps: SlackDeps, client: WebClient, click: Click, verdict: AnswerVerdict
) -> str | None:
    if not allowed(deps, channel=click.channel, user=click.user):
        return "Only the people on this channel's allow-list may answer approval requests here."
    with deps.store() as store, deps.ledger() as ledger:
        post = ledger.get(click.request)
        if post is None or (post.channel, post.ts) != (click.channel, click.ts):
            return f"This button is not on kubecrew's message for {click.request}; nothing done."
        try:
            request = store.approval(click.request)
        except NotFound as exc:
            return exc.message
        person = deps.people.by_account("slack", click.user)
        if person is None:
            return (
                f"Your Slack account ({click.user}) is not in kubecrew's people file, so it "
                f"cannot answer {request.id}; {approvals_ui.who_answers(request)}. "
                f"Ask an operator to add you to people.yaml."
            )
        try:
            after = approvals.answer(
                store, request.id, person, verdict, via="slack", now=deps.now()
            )
        except PermissionDenied:
            return f"{person} may not answer {request.id}: {approvals_ui.who_answers(request)}."
        except Conflict as exc:
            _show_current(client, store, ledger, post)
            return exc.message
        except ToolError as exc:
            return f"{exc.message} (nothing was recorded; click again)"
        log.info("%s: %s by %s via slack; now %s", request.id, verdict, person, after.state)
        show(client, store, ledger, post, after)
    return None


def _show_current(client: WebClient, store: Store, ledger: Ledger, post: Post) -> None:
    """After a refused answer (ended meanwhile), make the message show the request as it is."""
    current = store.approval(post.request)
    if current.state != post.state or len(current.answers) != post.answers:
        show(client, store, ledger, post, current)


def _tell(client: WebClient, click: Click, text: str) -> None:
    said = approvals_ui.refusal(text)
    client.chat_postEphemeral(
        channel=click.channel, user=click.user, text=said["text"], blocks=said["blocks"]
    )
