"""Durable approvals: a request for a decision that lives in the store, not in one UI.

When negotiation ends in "escalated" (a ChangePolicy approval rule fired, the counters did not
converge, the proposer refused a counter, or the verdict itself escalated), the store writes an
`ApprovalRequest` in the same transaction as the decision; its `cause` says which. Any channel
(`kubecrew approvals`, a Slack button, a PR review, an MCP tool call from any host) answers it
through `answer` here, whichever comes first: the identity must be one the request's approvers
name (a person by user or group; an agent only by name, where the org made it the arbiter or an
approval rule names it), a deny ends it at once,
grants end it once `min_approvals` distinct people granted, and after `expires_at` it can only
expire. The request's end decides its proposal (granted: approved by the people who granted;
denied or expired: rejected), in the same store transaction.

The agent that proposed waits with `wait`: it returns the ended request exactly once per request,
however many waiters (or restarts of one waiter) poll, because the store hands it out with a
conditional claim.

`settle` and `lapse` compute what an answer or an expiry does (the request's new state, the
proposal's final decision, the transcript lines and audit entries), purely, so every store
backend applies the same outcome and only has to write it atomically.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal

from core.errors import Conflict, PermissionDenied
from core.policy import audit
from core.policy.documents.common import Principals
from core.policy.proposals import (
    AnswerVerdict,
    ApprovalAnswer,
    ApprovalRequest,
    ApprovalState,
    Channel,
    Decision,
    Identity,
    ProposalRecord,
    TranscriptEvent,
)

if TYPE_CHECKING:
    from core.policy.store.base import Store, TargetState

ADMINS = Principals(groups=["kubecrew-admins"])  # who decides when no policy names anyone
STORE = Identity(kind="agent", name="policy-store")


def request_of(store: Store, proposal_id: str) -> ApprovalRequest | None:
    """The latest approval request opened for the proposal, if any."""
    mine = [r for r in store.approvals() if r.proposal == proposal_id]
    return mine[-1] if mine else None


def authorized(approvers: Principals, who: Identity) -> bool:
    """Whether `who` is one of `approvers`: a person by name or by a group its channel vouches
    for, an agent only by its name among `approvers.agents` (agents have no groups)."""
    if who.kind == "agent":
        return who.name in approvers.agents
    return who.name in approvers.users or any(g in approvers.groups for g in who.groups)


def needs(approvers: Principals) -> str:
    """Who answers, said to a person: the people to ask, and apart what an agent may do."""
    people, agents = approvers.people(), approvers.agents_settle()
    if not people:
        return agents
    return f"it needs {people}" + (f"; {agents}" if agents else "")


def answer(
    store: Store,
    request_id: str,
    person: Identity,
    verdict: AnswerVerdict,
    *,
    via: Channel,
    now: datetime,
    reason: str = "",
) -> ApprovalRequest:
    """Record `person`'s answer and return the request as it stands after it.

    Raises PermissionDenied when the person is not an approver, Conflict when the request has
    already ended (naming how), NotFound for an unknown id. The store ends an expired request
    instead of taking the answer.
    """
    request = store.approval(request_id)
    if not authorized(request.approvers, person):
        raise PermissionDenied(f"{person} may not answer {request_id}: {needs(request.approvers)}")
    _once(request, person)
    given = ApprovalAnswer(by=person, via=via, verdict=verdict, reason=reason, at=now)
    return store.answer(request_id, given, now=now)


def wait(
    store: Store,
    request_id: str,
    *,
    waiter: str,
    timeout: float,
    poll: float = 0.5,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    sleep: Callable[[float], None] = time.sleep,
) -> ApprovalRequest | None:
    """Block until the request has ended and this waiter claims it; None on timeout.

    Expires the request once it is past due, so a waiter never waits on a dead request. Raises
    Conflict when another waiter already claimed the ended request: the answer is acted on once.
    """
    deadline = time.monotonic() + timeout
    while True:
        store.expire(now=now())
        request = store.approval(request_id)
        if request.ended:
            claimed = store.claim(request_id, waiter=waiter)
            if claimed is None:
                raise Conflict(
                    f"{request_id} ended ({request.state}) and was already taken up by "
                    f"{store.approval(request_id).claimed_by}; it is acted on once"
                )
            return claimed
        if time.monotonic() >= deadline:
            return None
        sleep(poll)


@dataclass(frozen=True)
class Settlement:
    """What one answer or one expiry does to a request and, when it ends it, to its proposal."""

    request: ApprovalRequest  # as it stands afterwards
    decision: Decision | None  # the proposal's final decision, when the request ended
    events: list[TranscriptEvent]  # to append to the proposal's transcript
    entries: list[audit.AuditEntry]  # to append to the audit log
    approves: bool = False  # the store moves the target's approval version to this proposal


def settle(
    request: ApprovalRequest,
    given: ApprovalAnswer,
    record: ProposalRecord,
    target: TargetState,
    *,
    now: datetime,
) -> Settlement:
    """Take `given` on a pending, unexpired request (the store checks expiry first).

    A deny ends it; grants end it once `min_approvals` distinct people granted, approving the
    proposal unless its target was approved for another proposal since (then superseded).
    """
    if request.ended:
        raise Conflict(ended_message(request))
    _once(request, given.by)
    answers = [*request.answers, given]
    granted = [each for each in answers if each.verdict == "grant"]
    state: ApprovalState = "pending"
    decision = None
    if given.verdict == "deny":
        state = "denied"
        decision = _final(record, request, "rejected", given.by, [_said(given)], now)
    elif len({each.by.name for each in granted}) >= request.min_approvals:
        state = "granted"
        reasons = [_said(each) for each in granted]
        if target.version != record.proposal.basis:
            reasons.append(
                f"superseded: {request.action.target} was approved for proposal "
                f"{target.proposal} while this one waited; propose again from its new state"
            )
            decision = _final(record, request, "rejected", given.by, reasons, now)
        else:
            decision = _final(record, request, "approved", given.by, reasons, now)
    after = request.model_copy(update={"state": state, "answers": answers})
    at = len(record.transcript)
    note = f"{_said(given)} on {request.id} ({state})"
    events = [TranscriptEvent(seq=at, at=now, kind="answered", actor=str(given.by), note=note)]
    entries = [audit.answered(after, given)]
    if decision is not None:
        events.append(_decided_event(at + 1, decision))
        entries.append(audit.decision_entry(record.proposal.id, decision))
    approves = decision is not None and decision.outcome == "approved"
    return Settlement(after, decision, events, entries, approves=approves)


def lapse(request: ApprovalRequest, record: ProposalRecord, *, now: datetime) -> Settlement:
    """End a pending request past its `expires_at` as expired, rejecting its proposal."""
    after = request.model_copy(update={"state": "expired"})
    reason = f"approval expired: {request.id} was not answered by {request.expires_at.isoformat()}"
    decision = _final(record, request, "rejected", STORE, [reason], now)
    at = len(record.transcript)
    events = [
        TranscriptEvent(seq=at, at=now, kind="expired", actor=str(STORE), note=reason),
        _decided_event(at + 1, decision),
    ]
    return Settlement(after, decision, events, [audit.decision_entry(request.proposal, decision)])


def expired_message(request: ApprovalRequest) -> str:
    return (
        f"{request.id} expired at {request.expires_at.isoformat()} before it was answered, so "
        f"proposal {request.proposal} was rejected; the agent may propose again"
    )


def ended_message(request: ApprovalRequest) -> str:
    if request.state == "expired":
        return expired_message(request)
    return (
        f"{request.id} is already {request.state}; `kubecrew approvals show {request.id}` "
        f"shows who answered"
    )


def _once(request: ApprovalRequest, person: Identity) -> None:
    if any(given.by.name == person.name for given in request.answers):
        raise Conflict(f"{person} already answered {request.id}; each person answers once")


def _said(given: ApprovalAnswer) -> str:
    verb = "granted" if given.verdict == "grant" else "denied"
    return f"{verb} by {given.by} via {given.via}" + (f": {given.reason}" if given.reason else "")


def _final(
    record: ProposalRecord,
    request: ApprovalRequest,
    outcome: Literal["approved", "rejected"],
    by: Identity,
    reasons: list[str],
    now: datetime,
) -> Decision:
    escalated = record.decision
    return Decision(
        outcome=outcome,
        action=request.action,
        reasons=reasons,
        rounds=escalated.rounds if escalated is not None else 0,
        decided_by=by,
        at=now,
        citations=escalated.citations if escalated is not None else [],
    )


def _decided_event(seq: int, decision: Decision) -> TranscriptEvent:
    actor = str(decision.decided_by)
    return TranscriptEvent(seq=seq, at=decision.at, kind="decided", actor=actor, decision=decision)
