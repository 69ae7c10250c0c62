"""Pull requests as an approval channel: a review on a crew PR answers the request it carries.

A crew PR may carry an approval request (`mcp_servers.gitops.approval_links`: one marker line,
honoured only in a PR the crew's bot author opened). `sync` reads such PRs (open ones, and merged
ones whose request has not been seen to end) and turns each review into what a person's answer
from any other channel is: `approvals.answer(..., via="pull-request")`, so authorisation, "each
person answers once", expiry and "first answer wins" are the policy store's, not this module's.

- approve -> grant, request changes -> deny; a plain comment review decides nothing, and the
  crew's own reviews are skipped (the crew cannot approve what it asked for): a review by any of
  the crew's identities (the bot author, and every login the crew's gitops servers write as:
  `crew_identities`) is never a person's, whatever the people file says. The gitops tools take
  no author, so an agent's review is always one of these.
- An approval counts only when the PR's change is the request's action (`pr_changes`: replicas
  5 -> 3 on Deployment shop/web, and nothing else): otherwise a PR comment names the
  difference, and the request stays pending. A review made before the request was opened (the
  PR was amended since, and carries a new request: `pr_supersession`) was about other content
  and answers nothing.
- A login the people file does not know, or a person the request's approvers do not include, or
  one who already answered: a PR comment says why, and who may answer: the people to ask, and
  apart, whether the org's arbiter agent may also settle it (no one can ask an agent to review).
- When the request ends, from whichever channel, one comment on the PR says how it ended; a
  review that arrives after that changes nothing.

Exactly once: what was done for each review (keyed by forge, PR and review) and each ending is
claimed in a small SQLite ledger beside the policy store *before* it is done, so a restart, a
`--watch` loop and a manual sync running side by side never answer or comment twice; a failure
while acting releases the claim so the next sync retries. (The store refuses a second answer
from one person anyway; the ledger is what keeps the comments single.) The provider's `Review`
carries no forge id, so a review is keyed by a fingerprint of its author, verdict, time and text.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Literal, Protocol, TypeVar

from core.errors import Conflict, NotFound, PermissionDenied, Unavailable
from core.policy import approvals
from core.policy.approvals import expired_message
from core.policy.people import People
from core.policy.proposals import AnswerVerdict, ApprovalRequest
from core.policy.store import KUBERNETES, SPEC_ENV
from core.policy.store.base import Store
from core.policy.store.sqlite import default_path
from kubecrew.channels.pr.changes import difference
from mcp_servers.gitops.approval_links import marked
from mcp_servers.gitops.providers.base import Provider, PullRequest, Review
from mcp_servers.gitops.providers.github import GitHubProvider
from mcp_servers.gitops.providers.local import LocalProvider

OutcomeKind = Literal[
    "answered",  # the review was recorded as the person's grant or deny
    "unknown-reviewer",  # the login is in no people file: commented
    "not-authorised",  # the person is not one of the request's approvers: commented
    "refused",  # the store refused the answer (e.g. the person answered already): commented
    "late",  # the request had ended before the review was read: nothing to do
    "ended",  # the request ended: its final state was commented
    "unknown-request",  # the marker names no request in this store
    "mismatch",  # an approval of a PR whose change is not the request's action: commented
    "stale",  # a review made before the request was opened (the PR changed since): commented
]


@dataclass(frozen=True)
class Outcome:
    pr: int
    request: str
    kind: OutcomeKind
    detail: str
    reviewer: str = ""  # the forge login, for review outcomes

    def describe(self) -> str:
        by = f" (review by {self.reviewer})" if self.reviewer else ""
        return f"PR #{self.pr} {self.request}: {self.kind}{by}: {self.detail}"


class _Done(Protocol):
    @property
    def kind(self) -> str: ...


Done = TypeVar("Done", bound=_Done)


class Ledger:
    """What the PR channel has done, one row per (forge, PR, item), so it is done once."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(path, timeout=30.0, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS done (forge TEXT NOT NULL, pr INTEGER NOT NULL, "
                "item TEXT NOT NULL, outcome TEXT NOT NULL, PRIMARY KEY (forge, pr, item))"
            )
        except sqlite3.Error as exc:
            raise Unavailable(
                f"cannot open the PR channel's ledger {path}: {exc}; check the directory is "
                "writable, or give another policy store with --store"
            ) from exc

    def has(self, forge: str, pr: int, item: str) -> bool:
        query = "SELECT 1 FROM done WHERE forge = ? AND pr = ? AND item = ?"
        return self._db.execute(query, (forge, pr, item)).fetchone() is not None

    def once(self, forge: str, pr: int, item: str, act: Callable[[], Done]) -> Done | None:
        """`act()` if nobody claimed `item` before (None otherwise); its claim is released if
        it fails, so a later sync tries again."""
        claimed = self._db.execute(
            "INSERT OR IGNORE INTO done (forge, pr, item, outcome) VALUES (?, ?, ?, 'claimed')",
            (forge, pr, item),
        )
        if claimed.rowcount != 1:
            return None
        try:
            outcome = act()
        except BaseException:
            self._db.execute(
                "DELETE FROM done WHERE forge = ? AND pr = ? AND item = ?", (forge, pr, item)
            )
            raise
        self._db.execute(
            "UPDATE done SET outcome = ? WHERE forge = ? AND pr = ? AND item = ?",
            (outcome.kind, forge, pr, item),
        )
        return outcome

    def close(self) -> None:
        self._db.close()


def ledger_path(store_spec: str | None, environ: Mapping[str, str] = os.environ) -> Path:
    """Beside the SQLite store (`store.sqlite` -> `store.pr-reviews.sqlite`); for the Kubernetes
    store, under the kubecrew home, where the default SQLite store would be."""
    spec = store_spec or environ.get(SPEC_ENV)
    if spec is None or spec == KUBERNETES or spec.startswith(KUBERNETES + ":"):
        return default_path(environ).with_name("pr-reviews.sqlite")
    return Path(spec).expanduser().with_suffix(".pr-reviews.sqlite")


def forge_key(provider: Provider) -> str:
    """Names the forge a PR number belongs to, so two repositories' PR #1 are kept apart."""
    if isinstance(provider, GitHubProvider):
        return f"github:{provider.slug}"
    if isinstance(provider, LocalProvider):
        return f"local:{provider.dir.resolve()}"
    return type(provider).__name__  # one forge per provider kind: stable across restarts


def review_key(review: Review) -> str:
    """The forge's id of the review; for one stored before ids were kept, a hash of its content
    (two identical reviews in one second would then count once)."""
    if review.id:
        return f"review:{review.id}"
    text = "\x00".join((review.author, review.verdict, review.at, review.body))
    return "review:" + hashlib.sha256(text.encode()).hexdigest()[:24]


def sync(
    provider: Provider,
    store: Store,
    people: People,
    now: datetime,
    *,
    crew_author: str,
    ledger: Ledger,
    crew_identities: Collection[str] = (),
) -> list[Outcome]:
    """Apply every new review on the crew's marked PRs and announce every ended request.
    Reviews by `crew_author` or any of `crew_identities` are the crew's own: skipped."""
    forge = forge_key(provider)
    store.expire(now=now)
    crew = frozenset({crew_author, *crew_identities})
    channel = _Channel(provider, store, people, now, crew_author, ledger, forge, crew)
    outcomes: list[Outcome] = []
    for pr, request_id in _carriers(provider, ledger, forge, crew_author):
        outcomes += channel.pull_request(pr, request_id)
    return outcomes


def _carriers(
    provider: Provider, ledger: Ledger, forge: str, crew_author: str
) -> Iterator[tuple[PullRequest, str]]:
    """Open marked crew PRs, then merged ones whose request's end was not announced yet (a
    review may have come in just before the merge)."""
    for pr in provider.list_prs(state="open"):
        if (request_id := marked(pr, crew_author=crew_author)) is not None:
            yield pr, request_id
    for pr in provider.list_prs(state="merged"):
        request_id = marked(pr, crew_author=crew_author)
        if request_id is not None and not ledger.has(forge, pr.number, f"ended:{request_id}"):
            yield provider.get(pr.number).pr, request_id  # listings may leave reviews out


@dataclass(frozen=True)
class _Channel:
    provider: Provider
    store: Store
    people: People
    now: datetime
    crew_author: str
    ledger: Ledger
    forge: str
    crew: frozenset[str]  # every login the crew writes as: never a person's answer

    def pull_request(self, pr: PullRequest, request_id: str) -> list[Outcome]:
        try:
            self.store.approval(request_id)
        except NotFound:  # said once, not commented: another store may well know it
            detail = "no such approval request in this policy store; is --store the right one?"
            unknown = Outcome(pr.number, request_id, "unknown-request", detail)
            said = self.ledger.once(self.forge, pr.number, f"unknown:{request_id}", lambda: unknown)
            return [said] if said is not None else []
        outcomes = []
        for review in pr.reviews:
            if review.verdict == "comment" or review.author in self.crew:
                continue
            act = partial(self._review, pr, request_id, review)
            done = self.ledger.once(self.forge, pr.number, review_key(review), act)
            outcomes += [done] if done is not None else []
        if self.store.approval(request_id).ended:
            item = f"ended:{request_id}"
            act = partial(self._ended, pr, request_id)
            done = self.ledger.once(self.forge, pr.number, item, act)
            outcomes += [done] if done is not None else []
        return outcomes

    def _review(self, pr: PullRequest, request_id: str, review: Review) -> Outcome:
        request = self.store.approval(request_id)
        login = review.author

        def outcome(kind: OutcomeKind, detail: str) -> Outcome:
            return Outcome(pr.number, request_id, kind, detail, reviewer=login)

        if request.ended:
            return outcome("late", f"{request_id} was already {request.state}")
        person = self.people.by_account("github", login)
        if person is None:
            self._comment(
                pr,
                f"@{login}: your review was not counted for approval request {request_id}: "
                f"this login is not in kubecrew's people file, so kubecrew cannot tell who you "
                f"are. {_needs(request)}; an operator maps logins to people in people.yaml "
                f"(`github: {login}`).",
            )
            return outcome("unknown-reviewer", f"{login} is in no people file")
        if _before(review, request):
            self._comment(
                pr,
                f"@{login}: your review was made before approval request {request_id} was "
                "opened (this pull request changed since), so it answers nothing; review the "
                "pull request as it is now.",
            )
            return outcome("stale", f"made before {request_id} was opened")
        verdict: AnswerVerdict = "grant" if review.verdict == "approve" else "deny"
        if verdict == "grant" and approvals.authorized(request.approvers, person):
            differs = difference(request.action, self.provider.file_changes(pr.number))
            if differs:
                self._comment(
                    pr,
                    f"@{login}: your approval was not counted: approval request {request_id} "
                    f"is for {request.action.describe()}, but this pull request does not make "
                    f"that change: {differs}. Ask the crew to fix the pull request, or answer "
                    "the request where it is listed (`kubecrew approvals show "
                    f"{request_id}`).",
                )
                return outcome("mismatch", differs)
        said = "approved" if verdict == "grant" else "requested changes on"
        reason = f"{said} pull request #{pr.number}" + (
            f": {review.body[:200]}" if review.body else ""
        )
        try:
            after = approvals.answer(
                self.store, request_id, person, verdict, via="pull-request", now=self.now,
                reason=reason,
            )  # fmt: skip
        except PermissionDenied as exc:
            self._comment(
                pr,
                f"@{login}: your review was not counted: {person} may not answer {request_id}. "
                f"{_whom(request)}.",
            )
            return outcome("not-authorised", exc.message)
        except Conflict as exc:
            if self.store.approval(request_id).ended:  # expired, or another answer came first
                return outcome("late", exc.message)
            self._comment(pr, f"@{login}: your review was not counted: {exc.message}.")
            return outcome("refused", exc.message)
        return outcome("answered", f"{verdict} by {person} recorded; {request_id} is {after.state}")

    def _ended(self, pr: PullRequest, request_id: str) -> Outcome:
        request = self.store.approval(request_id)
        text = _ending(request, self.store)
        self._comment(pr, text)
        return Outcome(pr.number, request_id, "ended", text)

    def _comment(self, pr: PullRequest, body: str) -> None:
        self.provider.comment(pr.number, author=self.crew_author, body=body)


def _before(review: Review, request: ApprovalRequest) -> bool:
    """Made before `request` was opened, to the second forges keep (a review without a time
    is not judged by it)."""
    try:
        at = datetime.fromisoformat(review.at)
    except ValueError:
        return False
    if at.tzinfo is None:
        return False
    return at < request.requested_at.replace(microsecond=0)


def _needs(request: ApprovalRequest) -> str:
    """Who answers the request, for a person: the people, and apart, what an agent may do."""
    people, agents = request.approvers.people(), request.approvers.agents_settle()
    if not people:
        return f"The request is not a person's to answer: {agents}"
    return f"The request needs {people}" + (f" ({agents})" if agents else "")


def _whom(request: ApprovalRequest) -> str:
    """Whom a reviewer who may not answer should ask: only people (a person cannot ask an agent
    to review), then apart whether the org's arbiter may settle it anyway."""
    people, agents = request.approvers.people(), request.approvers.agents_settle()
    if not people:
        return f"No review here answers it: {agents}"
    said = f"It needs {people}: ask one of them to review this pull request"
    return said + (f"; {agents}" if agents else "")


def _ending(request: ApprovalRequest, store: Store) -> str:
    """How a request ended, for the PR: its answers and what became of its proposal."""
    if request.state == "expired":
        return f"Approval request {expired_message(request)}."
    answers = "; ".join(
        f"{'granted' if a.verdict == 'grant' else 'denied'} by {a.by} via {a.via}"
        + (f": {a.reason}" if a.reason else "")
        for a in request.answers
    )
    text = f"Approval request {request.id} is {request.state} ({answers})."
    decision = store.get(request.proposal).decision
    if decision is not None:
        text += f" Proposal {request.proposal}: {decision.describe()}."
    return text
