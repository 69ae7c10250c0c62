"""Negotiation: a proposal, the stakeholders' automatic answers, rounds of counters, one decision.

`deliberate` is pure: from a proposal as read from the store, the policies and the target's
approval state, it computes the transcript's new evaluations and the decision. Each round runs
the dry-run `evaluation` on the current action; every stakeholder (from Ownership) answers by
its own team's findings, resolved under the org's PriorityPolicy (accept, reject citing policy
and rule, or counter with the action it would accept), and the whole set of findings, resolved
the same way, decides the round. A counter becomes the next round's action when the proposer
takes counters; the rounds end when an action is allowed, rejected, needs a person, or the
round limit passes (then a person decides).

`negotiate` wraps `deliberate` in the store's optimistic locking: read, deliberate, write the
decision against the version read; on Conflict read again. A proposal decided meanwhile (by
another process) is returned as decided, never decided twice; a proposal whose target was
approved for someone else since it was made is rejected as superseded, so two conflicting
proposals on one target are never both approved.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from mcp_servers.common.errors import Conflict
from mcp_servers.policy.actions import Action, EvaluationRequest, ReplicaChange
from mcp_servers.policy.catalog import PolicySet
from mcp_servers.policy.documents.common import Principals
from mcp_servers.policy.documents.priority import DEFAULT_PRIORITY
from mcp_servers.policy.evaluation import evaluate
from mcp_servers.policy.findings import Citation, Counter, EvaluationReport, Stakeholder
from mcp_servers.policy.proposals import (
    Decision,
    Evaluation,
    Identity,
    Outcome,
    Proposal,
    ProposalRecord,
    TranscriptEvent,
    Verdict,
)
from mcp_servers.policy.resolution import resolve
from mcp_servers.policy.store.base import Store, TargetState

ROUNDS = 3
ATTEMPTS = 5
STORE = Identity(kind="agent", name="policy-store")


def new_proposal_id() -> str:
    return f"p-{secrets.token_hex(4)}"


@dataclass(frozen=True)
class Deliberation:
    evaluations: list[Evaluation]
    decision: Decision

    def events(self, *, after: int) -> list[TranscriptEvent]:
        """The transcript lines this adds, numbered after the `after` lines already stored."""
        at = self.decision.at
        lines = [
            TranscriptEvent(
                seq=after + index,
                at=at,
                kind="evaluated",
                actor=each.agent or each.stakeholder,
                evaluation=each,
            )
            for index, each in enumerate(self.evaluations)
        ]
        return [
            *lines,
            TranscriptEvent(
                seq=after + len(lines),
                at=at,
                kind="decided",
                actor=str(self.decision.decided_by),
                decision=self.decision,
            ),
        ]


def negotiate(
    store: Store,
    policies: PolicySet,
    proposal_id: str,
    *,
    now: datetime,
    rounds: int = ROUNDS,
    attempts: int = ATTEMPTS,
) -> ProposalRecord:
    """Decide an open proposal once, or return its decision when it is already made."""
    for _ in range(attempts):
        record = store.get(proposal_id)
        if record.decision is not None:
            return record
        target = store.target(record.proposal.action.target)
        outcome = deliberate(record.proposal, policies, target, now=now, rounds=rounds)
        try:
            return store.decide(
                proposal_id,
                version=record.version,
                events=outcome.events(after=len(record.transcript)),
                decision=outcome.decision,
            )
        except Conflict:
            continue  # someone else wrote first: read what they wrote and deliberate again
    raise Conflict(
        f"proposal {proposal_id} kept changing during {attempts} attempts to decide it; "
        f"retry, or see `kubecrew proposals show {proposal_id}`"
    )


def deliberate(
    proposal: Proposal,
    policies: PolicySet,
    target: TargetState,
    *,
    now: datetime,
    rounds: int = ROUNDS,
) -> Deliberation:
    def decided(outcome: Outcome, action: Action, reasons: list[str], done: int) -> Decision:
        return Decision(
            outcome=outcome,
            action=action,
            reasons=reasons,
            rounds=done,
            decided_by=STORE,
            escalate_to=escalate_to if outcome == "escalated" else None,
            at=now,
        )

    escalate_to: Principals | None = None
    if target.version != proposal.basis:
        reason = (
            f"superseded: {proposal.action.target} was approved for proposal {target.proposal} "
            f"after this one was made; propose again from its new state"
        )
        return Deliberation([], decided("rejected", proposal.action, [reason], 0))
    if proposal.deadline is not None and now > proposal.deadline:
        reason = f"the deadline {proposal.deadline.isoformat()} passed before a decision"
        return Deliberation([], decided("rejected", proposal.action, [reason], 0))
    evaluations: list[Evaluation] = []
    reasons: list[str] = []
    action = proposal.action
    for round_ in range(1, rounds + 1):
        report = evaluate(
            policies,
            EvaluationRequest(
                action=action, target=proposal.target, metrics=proposal.metrics, now=now
            ),
        )
        action = report.action  # with replicas.from filled in from the live object
        evaluations += [_answer(holder, report, policies, round_) for holder in report.stakeholders]
        escalate_to = _owners(report.stakeholders)
        verdict = report.verdict
        reasons += [f"round {round_}: {reason}" for reason in verdict.reasons]
        if verdict.outcome == "allow" and verdict.approvals:
            need = verdict.approvals[0]
            escalate_to = need.approvers
            reasons.append(f"{need.citation} needs approval by {need.approvers.describe()}")
            return Deliberation(evaluations, decided("escalated", action, reasons, round_))
        if verdict.outcome == "allow":
            outcome: Outcome = "approved" if round_ == 1 else "approved-as-countered"
            return Deliberation(evaluations, decided(outcome, action, reasons, round_))
        if verdict.outcome == "reject":
            return Deliberation(evaluations, decided("rejected", action, reasons, round_))
        if verdict.outcome == "escalate" or verdict.counter is None:
            return Deliberation(evaluations, decided("escalated", action, reasons, round_))
        countered = _countered(action, verdict.counter)
        if proposal.counters == "refuse":
            refusal = "the proposer takes no counter-offer: a person decides"
            evaluations.append(_proposer(proposal, round_, "reject", None, refusal))
            return Deliberation(
                evaluations, decided("escalated", action, [*reasons, refusal], round_)
            )
        evaluations.append(
            _proposer(proposal, round_, "accept", countered, f"takes {verdict.counter.describe()}")
        )
        action = countered
    reason = f"no agreement after {rounds} rounds of counter-offers: a person decides"
    return Deliberation(evaluations, decided("escalated", action, [*reasons, reason], rounds))


def _answer(
    holder: Stakeholder, report: EvaluationReport, policies: PolicySet, round_: int
) -> Evaluation:
    """A stakeholder's automatic answer: its own team's findings, under the org's priorities."""
    own = [f for f in report.findings if f.team == holder.team]
    declared = policies.priority
    priority = declared.spec if declared is not None else DEFAULT_PRIORITY
    owner = holder.team if holder.owner else None
    _, verdict = resolve(own, priority, report.action, owner=owner)
    cited = [f.citation for f in own if f.effect in ("reject", "error")]
    reasons = [str(f) for f in own if f.effect in ("reject", "error")]
    if not own:
        reasons = [f"no policy of team {holder.team} applies"]
    if verdict.outcome == "allow":
        return _evaluation(holder, round_, "accept", [], reasons or list(verdict.reasons))
    if verdict.outcome == "counter" and verdict.counter is not None:
        countered = _countered(report.action, verdict.counter)
        return _evaluation(holder, round_, "counter", cited, reasons, counter=countered)
    return _evaluation(holder, round_, "reject", cited, reasons + list(verdict.reasons))


def _evaluation(
    holder: Stakeholder,
    round_: int,
    verdict: Verdict,
    citations: list[Citation],
    reasons: list[str],
    *,
    counter: Action | None = None,
) -> Evaluation:
    return Evaluation(
        stakeholder=holder.team,
        agent=holder.agent,
        round=round_,
        verdict=verdict,
        citations=citations,
        counter=counter,
        reasons=reasons,
    )


def _proposer(
    proposal: Proposal, round_: int, verdict: Verdict, counter: Action | None, reason: str
) -> Evaluation:
    return Evaluation(
        stakeholder="proposer",
        agent=proposal.proposer.name,
        round=round_,
        verdict=verdict,
        counter=counter,
        reasons=[reason],
    )


def _countered(action: Action, counter: Counter) -> Action:
    update: dict[str, object] = {}
    if counter.replicas is not None and action.replicas is not None:
        update["replicas"] = ReplicaChange(from_=action.replicas.from_, to=counter.replicas)
    if counter.via is not None:
        update["via"] = counter.via
    return action.model_copy(update=update)


def _owners(holders: Sequence[Stakeholder]) -> Principals | None:
    return next((holder.humans for holder in holders if holder.owner), None)
