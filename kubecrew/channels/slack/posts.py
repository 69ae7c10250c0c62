"""The poster: keeps one Slack message per approval request, in step with the policy store.

Each pass (at start, then every `poll` seconds on its own thread) expires what is past due,
posts every pending request the ledger has no message for to its owners' channel, and updates
every message whose request changed since it was shown: answered, or ended from any channel
(CLI, MCP, a pull request, expiry, or a click handled by another replica of this app). Clicks
update their message at once through `show`; the poster is what catches everything else.

Slack refusing one message (a channel the bot is not in, a rate limit) costs that message only:
it is logged once and tried again on the next pass, and the other requests go on.
"""

from __future__ import annotations

import logging
import threading

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from core.errors import ToolError
from core.policy.findings import Citation
from core.policy.proposals import ApprovalRequest
from core.policy.store.base import Store
from kubecrew.channels.slack import approvals_ui, owners
from kubecrew.channels.slack.deps import SlackDeps
from kubecrew.channels.slack.ledger import Ledger, Post

log = logging.getLogger(__name__)


def show(
    client: WebClient, store: Store, ledger: Ledger, post: Post, request: ApprovalRequest
) -> None:
    """Update `post`'s message to show `request` as it stands now, and note what it shows."""
    shown = _message(store, request)
    client.chat_update(channel=post.channel, ts=post.ts, text=shown["text"], blocks=shown["blocks"])
    ledger.shown(request.id, state=request.state, answers=len(request.answers))


class Poster:
    def __init__(self, deps: SlackDeps, client: WebClient) -> None:
        self.deps, self.client = deps, client
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._warned: set[tuple[str, str]] = set()  # (request, problem) already logged

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="kubecrew-slack-poster", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _run(self) -> None:
        while True:
            try:
                self.sync()
            except (ToolError, SlackClientError) as exc:  # the store or Slack: next pass
                log.warning("approvals not synced with Slack this time: %s", _said(exc))
            if self._stop.wait(self.deps.settings.poll):
                return

    def sync(self) -> None:
        """One pass: expire, post what is new, update what changed."""
        with self.deps.store() as store, self.deps.ledger() as ledger:
            store.expire(now=self.deps.now())
            for request in store.approvals(state="pending"):
                if ledger.get(request.id) is None:
                    self._post(store, ledger, request)
            for post in ledger.showing("pending"):
                self._refresh(store, ledger, post)

    def _post(self, store: Store, ledger: Ledger, request: ApprovalRequest) -> None:
        default = self.deps.settings.channel
        channel = owners.channel_for(request, self.deps.policies, default=default)
        if channel is None:
            self._warn_once(
                request.id,
                "nowhere to post",
                f"{request.id} has no channel: give its owner's Ownership `spec.slack`, "
                f"or run `kubecrew slack --channel CHANNEL_ID`",
            )
            return
        shown = _message(store, request)
        try:
            sent = self.client.chat_postMessage(
                channel=channel, text=shown["text"], blocks=shown["blocks"]
            )
        except SlackApiError as exc:
            self._warn_once(request.id, _said(exc), f"{request.id} not posted to {channel}")
            return
        ts, where = str(sent["ts"]), str(sent["channel"])
        ledger.posted(Post(request.id, where, ts, request.state, len(request.answers)))
        log.info("posted %s to %s", request.id, where)

    def _refresh(self, store: Store, ledger: Ledger, post: Post) -> None:
        try:
            request = store.approval(post.request)
        except ToolError as exc:
            self._warn_once(post.request, "gone", f"{post.request}: {exc.message}")
            return
        if request.state == post.state and len(request.answers) == post.answers:
            return
        try:
            show(self.client, store, ledger, post, request)
        except SlackApiError as exc:
            self._warn_once(request.id, _said(exc), f"{request.id}'s message not updated")

    def _warn_once(self, request: str, problem: str, text: str) -> None:
        if (request, problem) not in self._warned:
            self._warned.add((request, problem))
            log.warning("%s (%s); trying again each pass", text, problem)


def _message(store: Store, request: ApprovalRequest) -> approvals_ui.Message:
    """The request as the store has it, with its proposal's decision: the citations, and
    what an ended request came to (a grant may have been superseded)."""
    decision = store.get(request.proposal).decision
    citations: list[Citation] = [] if decision is None else list(decision.citations)
    return approvals_ui.message(request, citations, decision=decision if request.ended else None)


def _said(exc: Exception) -> str:
    """Slack's error code (`channel_not_found`), never the request that carried the token."""
    if isinstance(exc, SlackApiError):
        return str(exc.response.get("error", "error"))
    return exc.message if isinstance(exc, ToolError) else type(exc).__name__
