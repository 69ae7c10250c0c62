"""The crew's Slack app as the tests drive it: `App` is one app serving HTTP events (its URL,
the fake Slack Web API it talks to, its policy store), clicked and posted to the way Slack does
(signed POSTs); `OWNERS` is the shop's owners' channel in the shipped policies, `SECRET` the
signing secret and `PEOPLE` the people file the app is started with. `buttons` and `text_of`
read the Block Kit blocks of a message it posted.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from core.policy.proposals import ApprovalRequest
from core.policy.store.sqlite import SqliteStore
from tests.support.policies import escalated
from tests.support.slack import FakeSlack, interaction, post_signed
from tests.support.waiting import eventually

OWNERS = "C05H0PADM1"  # policies/ownership.yaml: the shop's channel
SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
PEOPLE = """\
apiVersion: kubecrew.io/v1alpha1
kind: People
people:
  - {name: alice, groups: [shop-admins], slack: U0ALICE}
  - {name: bob, groups: [shop-admins], slack: U0BOB}
  - {name: mallory, groups: [developers], slack: U0MALLORY}
"""


@dataclass
class App:
    slack: FakeSlack
    url: str  # the app's events URL
    store_path: Path

    def escalate(self) -> ApprovalRequest:
        return escalated(self.store_path)

    def posted(self, request: ApprovalRequest) -> dict[str, Any]:
        """The one chat.postMessage for `request` (waits for the poster to send it)."""

        def found() -> list[dict[str, Any]]:
            return [c for c in self.slack.calls("chat.postMessage") if request.id in c["text"]]

        (post,) = eventually(found, timeout=15, what=f"{request.id} posted")
        return post

    def ts_of(self, request: ApprovalRequest) -> str:
        self.posted(request)
        messages = list(self.slack.messages.items())
        (ts,) = [ts for (_, ts), message in messages if request.id in message["text"]]
        return ts

    def click(
        self, user: str, request: ApprovalRequest, *, action: str, channel: str = OWNERS
    ) -> httpx.Response:
        body = interaction(
            user=user,
            channel=channel,
            ts=self.ts_of(request),
            action_id=action,
            value=request.id,
            response_url=self.slack.url + "response",
        )
        return self.send(body, content_type="application/x-www-form-urlencoded")

    def send(
        self, body: bytes, *, content_type: str, secret: str = SECRET, timestamp: int | None = None
    ) -> httpx.Response:
        return post_signed(
            self.url, body, secret=secret, content_type=content_type, timestamp=timestamp
        )

    def store(self) -> SqliteStore:
        return SqliteStore(self.store_path)


def buttons(blocks: list[dict[str, Any]]) -> list[str]:
    return [e["action_id"] for b in blocks if b["type"] == "actions" for e in b["elements"]]


def text_of(blocks: list[dict[str, Any]]) -> str:
    parts = []
    for block in blocks:
        parts.append((block.get("text") or {}).get("text", ""))
        parts += [
            f["text"]
            for f in block.get("fields", []) + block.get("elements", [])
            if f.get("type") == "mrkdwn"
        ]
    return "\n".join(parts)
