"""An approval message in Slack follows its request wherever it is resolved: a review on the
crew's pull request, and a grant that came too late to count (superseded) shows as that, not as
"Granted". The app runs for real (HTTP events mode); the poster's pass is what catches both."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.policy import approvals
from core.policy.negotiation import negotiate
from core.policy.people import People, Person
from core.policy.proposals import Identity
from kubecrew.channels.pr.approvals import Ledger, ledger_path, sync
from kubecrew.channels.slack.approvals_ui import SUPERSEDED
from tests.support.policies import defaults, downscale
from tests.support.pr_channel import crew_pr
from tests.support.slack_app import OWNERS, App, buttons, text_of
from tests.support.waiting import eventually

ALICE = Identity(kind="person", name="alice", groups=("shop-admins",))


def updated(app: App) -> Callable[[], list[dict[str, Any]]]:
    return lambda: app.slack.calls("chat.update")


def test_an_approving_review_on_the_pr_updates_the_slack_message(
    serve: Callable[..., App], manifests: Path
) -> None:
    app = serve()
    request = app.escalate()
    ts = app.ts_of(request)
    provider, number = crew_pr(manifests, request.id)
    provider.review(number, author="alice-gh", verdict="approve", body="ok for the night")
    people = People(people=[Person(name="alice", groups=["shop-admins"], github="alice-gh")])
    store, ledger = app.store(), Ledger(ledger_path(str(app.store_path)))
    try:
        done = sync(provider, store, people, datetime.now(UTC), crew_author="kubecrew",
                    ledger=ledger)  # fmt: skip
    finally:
        ledger.close()
        store.close()
    assert [o.kind for o in done] == ["answered", "ended"]

    (update,) = eventually(updated(app), timeout=10, what="the message updated")
    assert (update["channel"], update["ts"]) == (OWNERS, ts)
    assert "Granted by alice via pull-request" in update["text"]
    assert buttons(update["blocks"]) == []
    assert f"approved pull request #{number}: ok for the night" in text_of(update["blocks"])


def test_a_grant_that_was_superseded_shows_as_superseded_not_granted(
    serve: Callable[..., App],
) -> None:
    app = serve()
    request = app.escalate()
    app.posted(request)
    now = datetime.now(UTC)
    store = app.store()
    try:
        other = downscale(to=4, created=now)  # meanwhile, a smaller change was approved
        store.propose(other)
        assert negotiate(store, defaults(), other.id, now=now).decision is not None
        after = approvals.answer(store, request.id, ALICE, "grant", via="cli", now=now)
        assert after.state == "granted"  # alice's answer stands; the proposal lost its basis
    finally:
        store.close()

    (update,) = eventually(updated(app), timeout=10, what="the message updated")
    assert update["text"].startswith("Granted by alice via cli, but superseded:")
    shown = text_of(update["blocks"])
    assert SUPERSEDED in shown and "*Not carried out*" in shown
    assert f"was approved for proposal {other.id} while this one waited" in shown
    assert buttons(update["blocks"]) == []
