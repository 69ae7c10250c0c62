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

Each decision made is a `policy_decision proposal <action>` span and a count in
`kubecrew_policy_decisions_total` (by="negotiation"), by the proposer's name (core.telemetry).

An escalation comes with its `ApprovalRequest`, written in the same `decide`: the approvers of
the ChangePolicy rule that asked for approval, else the owning team's people (counters refused
or not converging, a tie, a rule that could not be evaluated), else the group `kubecrew-admins`;
it expires after the rule's `expiresAfter` (a day by default), counted from the `now` the
negotiation was given. An escalation no approval rule asked for is one the org's own policy may
settle, so it also names the PriorityPolicy's `arbiter` agent (the Platform by default), which
may answer in the people's stead; a rule's approvers asked for by name are never extended.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from core.errors import Conflict
from core.policy.actions import Action, EvaluationRequest, ReplicaChange
from core.policy.approvals import ADMINS, STORE
from core.policy.catalog import PolicySet
from core.policy.documents.common import Principals
from core.policy.documents.priority import PrioritySpec
from core.policy.evaluation import evaluate
from core.policy.findings import ApprovalNeed, Citation, Counter, EvaluationReport, Stakeholder
from core.policy.proposals import (
    DEFAULT_EXPIRY,
    ApprovalRequest,
    Cause,
    Decision,
    Evaluation,
    Outcome,
    Proposal,
    ProposalRecord,
    TranscriptEvent,
    Verdict,
    new_request_id,
)
from core.policy.resolution import resolve
from core.policy.store.base import Store, TargetState
from core.telemetry import Ruling, policy_decision

ROUNDS = 3
ATTEMPTS = 5
# A decision in the three words the crew's metrics use (core.telemetry).
DECISIONS: dict[Outcome, Ruling] = {
    "approved": "allow", "approved-as-countered": "allow", "rejected": "deny", "escalated": "ask",
}  # fmt: skip


def new_proposal_id() -> str:
    return f"p-{secrets.token_hex(4)}"


@dataclass(frozen=True)
class Deliberation:
    evaluations: list[Evaluation]
    decision: Decision
    approval: ApprovalRequest | None = None  # escalated: the request a person answers

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
        lines.append(
            TranscriptEvent(
                seq=after + len(lines),
                at=at,
                kind="decided",
                actor=str(self.decision.decided_by),
                decision=self.decision,
            )
        )
        if self.approval is not None:
            request = self.approval
            note = (
                f"approval {request.id} requested from {request.approvers.describe()} "
                f"({request.min_approvals} needed), until {request.expires_at.isoformat()}"
            )
            lines.append(
                TranscriptEvent(
                    seq=after + len(lines),
                    at=at,
                    kind="approval-requested",
                    actor=str(self.decision.decided_by),
                    note=note,
                )
            )
        return lines


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
        action, proposer = record.proposal.action, record.proposal.proposer.name
        target = store.target(action.target)
        with policy_decision(f"proposal {action.type}", agent=proposer, by="negotiation") as told:
            outcome = deliberate(record.proposal, policies, target, now=now, rounds=rounds)
            try:
                decided = store.decide(
                    proposal_id,
                    version=record.version,
                    events=outcome.events(after=len(record.transcript)),
                    decision=outcome.decision,
                    approval=outcome.approval,
                )
            except Conflict:
                continue  # someone else wrote first: read what they wrote and deliberate again
            told.verdict = outcome.decision.outcome
            told.decided(action.type, DECISIONS[outcome.decision.outcome])
            return decided
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
    def ended(
        outcome: Outcome,
        action: Action,
        reasons: list[str],
        done: int,
        need: ApprovalNeed | None = None,
        cause: Cause = "approval-rule",
    ) -> Deliberation:
        cited = _cited(evaluations) + ([need.citation] if need is not None else [])
        if outcome == "escalated" and need is None and priority.arbiter is not None:
            reasons = [*reasons, _ARBITRATED.format(agent=priority.arbiter)]
        decision = Decision(
            outcome=outcome,
            action=action,
            reasons=reasons,
            rounds=done,
            decided_by=STORE,
            at=now,
            citations=list(dict.fromkeys(cited)),
        )
        if outcome != "escalated":
            return Deliberation(evaluations, decision)
        approvers = need.approvers if need is not None else _arbitrable(owners, priority)
        lasts = need.expires_after if need is not None else None
        request = ApprovalRequest(
            id=new_request_id(),
            proposal=proposal.id,
            action=action,
            approvers=approvers,
            min_approvals=need.min_approvals if need is not None else 1,
            reasons=reasons,
            cause="approval-rule" if need is not None else cause,
            requested_at=now,
            expires_at=now + (lasts or DEFAULT_EXPIRY),
        )
        decision = decision.model_copy(update={"escalate_to": approvers})
        return Deliberation(evaluations, decision, request)

    evaluations: list[Evaluation] = []
    owners: Principals | None = None
    priority = policies.priorities
    if target.version != proposal.basis:
        reason = (
            f"superseded: {proposal.action.target} was approved for proposal {target.proposal} "
            f"after this one was made; propose again from its new state"
        )
        return ended("rejected", proposal.action, [reason], 0)
    if proposal.deadline is not None and now > proposal.deadline:
        reason = f"the deadline {proposal.deadline.isoformat()} passed before a decision"
        return ended("rejected", proposal.action, [reason], 0)
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
        evaluations += [answer_for(each, report, policies, round_) for each in report.stakeholders]
        owners = _owners(report.stakeholders)
        verdict = report.verdict
        reasons += [f"round {round_}: {reason}" for reason in verdict.reasons]
        if verdict.outcome == "allow" and verdict.approvals:
            need = verdict.approvals[0]
            reasons.append(f"{need.citation} needs approval by {need.approvers.describe()}")
            return ended("escalated", action, reasons, round_, need)
        if verdict.outcome == "allow":
            outcome: Outcome = "approved" if round_ == 1 else "approved-as-countered"
            return ended(outcome, action, reasons, round_)
        if verdict.outcome == "reject":
            return ended("rejected", action, reasons, round_)
        if verdict.outcome == "escalate" or verdict.counter is None:
            tied = any(each.opinion == "escalate" for each in report.concerns)
            return ended(
                "escalated", action, reasons, round_, cause="tie" if tied else "unevaluable"
            )
        countered = countered_action(action, verdict.counter)
        if proposal.counters == "refuse":
            refusal = "the proposer takes no counter-offer: a person decides"
            evaluations.append(_proposer(proposal, round_, "reject", None, refusal))
            return ended("escalated", action, [*reasons, refusal], round_, cause="counter-refused")
        evaluations.append(
            _proposer(proposal, round_, "accept", countered, f"takes {verdict.counter.describe()}")
        )
        action = countered
    reason = f"no agreement after {rounds} rounds of counter-offers: a person decides"
    return ended("escalated", action, [*reasons, reason], rounds, cause="no-agreement")


_ARBITRATED = (
    "org policy may settle this: the arbiter agent {agent} may answer it in the people's stead "
    "(PriorityPolicy arbiter)"
)


def _arbitrable(owners: Principals | None, priority: PrioritySpec) -> Principals:
    """Who answers an escalation no approval rule asked for: the owning team's people (else
    the admins), and the org's arbiter agent when it has one."""
    people = owners or ADMINS
    return people if priority.arbiter is None else people.with_agent(priority.arbiter)


def _cited(evaluations: Sequence[Evaluation]) -> list[Citation]:
    return [citation for each in evaluations for citation in each.citations]


def answer_for(
    holder: Stakeholder, report: EvaluationReport, policies: PolicySet, round_: int = 1
) -> Evaluation:
    """A stakeholder's automatic answer: its own team's findings, under the org's priorities."""
    own = [f for f in report.findings if f.team == holder.team]
    owner = holder.team if holder.owner else None
    _, verdict = resolve(own, policies.priorities, report.action, owner=owner)
    cited = [f.citation for f in own if f.effect in ("reject", "error")]
    reasons = [str(f) for f in own if f.effect in ("reject", "error")]
    if not own:
        reasons = [f"no policy of team {holder.team} applies"]
    if verdict.outcome == "allow":
        return _evaluation(holder, round_, "accept", [], reasons or list(verdict.reasons))
    if verdict.outcome == "counter" and verdict.counter is not None:
        countered = countered_action(report.action, verdict.counter)
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


def countered_action(action: Action, counter: Counter) -> Action:
    """The action with the counter-offer's replica count and channel."""
    update: dict[str, object] = {}
    if counter.replicas is not None and action.replicas is not None:
        update["replicas"] = ReplicaChange(from_=action.replicas.from_, to=counter.replicas)
    if counter.via is not None:
        update["via"] = counter.via
    return action.model_copy(update=update)


def _owners(holders: Sequence[Stakeholder]) -> Principals | None:
    return next((holder.humans for holder in holders if holder.owner), None)
