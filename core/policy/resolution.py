"""Findings -> one verdict: concerns weighed by priority, gates always holding.

Each concern (security, reliability, cost) first forms one opinion from its findings: reject,
support, or none; when it both rejects and supports, the PriorityPolicy's tie-breaks decide
(`owner`, `most-conservative`, `escalate`; a rejection when none decides). Then, in priority
order, a concern's rejection binds unless a higher concern supports the action: "reliability
rejects, cost supports, reliability outranks cost" keeps the rejection; the reverse order would
drop it. ChangePolicy rejections (gates) always bind.

Binding rejections become a counter-offer when every one of them says what it would accept
(replica bounds, or a pull request instead of a patch) and those agree; otherwise the action is
rejected. A rule that could not be evaluated never lets an action through: the verdict escalates
to a person instead of allowing. Pure functions of their input, hence deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from core.policy.actions import Action
from core.policy.documents.common import Concern
from core.policy.documents.priority import PrioritySpec
from core.policy.findings import (
    ApprovalNeed,
    ConcernVerdict,
    Counter,
    Finding,
    Opinion,
    Outcome,
    ReplicaBounds,
    Verdict,
)


def resolve(
    findings: Sequence[Finding], priority: PrioritySpec, action: Action, *, owner: str | None
) -> tuple[list[ConcernVerdict], Verdict]:
    concerns = [_opinion(c, findings, priority, owner) for c in priority.ranked()]
    rejecting: list[Concern] = []
    for verdict in concerns:
        if verdict.opinion in ("support", "escalate"):
            break
        if verdict.opinion == "reject":
            rejecting.append(verdict.concern)
    reasons = _weighing(concerns, rejecting)
    binding = [f for f in findings if f.effect == "reject" and f.concern in rejecting]
    binding += [f for f in findings if f.effect == "reject" and f.concern is None]
    reasons += [f"{f.concern or 'change control'} rejects: {f}" for f in binding]
    decider = next((v for v in concerns if v.opinion != "none"), None)
    counter = None
    if decider is not None and decider.opinion == "escalate":
        outcome: Outcome = "escalate"  # a tie in the highest concern with an opinion
        reasons.append(f"{decider.concern}: {decider.note}")
    else:
        outcome, counter = _counter(binding, action, reasons)
    errors = [f for f in findings if f.effect == "error"]
    if errors and outcome == "allow":
        outcome = "escalate"
        reasons += [f"a person decides, since {f.message}" for f in errors]
    return concerns, Verdict(
        outcome=outcome,
        counter=counter,
        approvals=[
            ApprovalNeed(
                citation=f.citation,
                approvers=f.approvers,
                min_approvals=f.min_approvals,
                expires_after=f.expires_after,
            )
            for f in findings
            if f.effect == "require-approval" and f.approvers and f.min_approvals
        ],
        not_before=max((f.opens_at for f in findings if f.opens_at), default=None),
        reasons=reasons,
    )


def _opinion(
    concern: Concern, findings: Sequence[Finding], priority: PrioritySpec, owner: str | None
) -> ConcernVerdict:
    mine = [f for f in findings if f.concern == concern]
    rejects = [f for f in mine if f.effect == "reject"]
    supports = [f for f in mine if f.effect == "support"]
    opinion: Opinion = "reject" if rejects else "support" if supports else "none"
    note = ""
    if rejects and supports:
        opinion, note = _tie(rejects, supports, priority, owner)
    cited = rejects + supports if opinion == "escalate" else rejects or supports
    return ConcernVerdict(
        concern=concern, opinion=opinion, citations=[f.citation for f in cited], note=note
    )


def _tie(
    rejects: list[Finding], supports: list[Finding], priority: PrioritySpec, owner: str | None
) -> tuple[Opinion, str]:
    for tie_break in priority.tieBreaks:
        if tie_break == "owner" and owner is not None:
            owner_rejects = any(f.team == owner for f in rejects)
            if owner_rejects != any(f.team == owner for f in supports):
                side: Opinion = "reject" if owner_rejects else "support"
                return side, f"tie broken by owner: team {owner}'s policy says {side}"
        elif tie_break == "most-conservative":
            return "reject", "tie broken by most-conservative: the rejection holds"
        elif tie_break == "escalate":
            return "escalate", "tie: a person decides (tie-break escalate)"
    return "reject", "no tie-break decides the tie: the rejection holds"


def _weighing(concerns: list[ConcernVerdict], rejecting: list[Concern]) -> list[str]:
    """Say how the priority order decided between concerns that disagree."""
    supporters = [v.concern for v in concerns if v.opinion == "support"]
    if rejecting:
        return [f"{rejecting[0]} outranks {s}, which supports it" for s in supporters]
    if not supporters:
        return []
    ignored = [v.concern for v in concerns if v.opinion == "reject"]
    return [f"{supporters[0]} supports it and no higher concern objects"] + [
        f"{supporters[0]} outranks {concern}, whose rejection does not bind" for concern in ignored
    ]


def _counter(
    binding: list[Finding], action: Action, reasons: list[str]
) -> tuple[Outcome, Counter | None]:
    if not binding:
        return "allow", None
    if any(f.bounds is None and f.via is None for f in binding):
        return "reject", None
    replicas = None
    bounded = [f.bounds for f in binding if f.bounds is not None]
    if bounded:
        if action.replicas is None:
            return "reject", None
        bounds = ReplicaBounds()
        for each in bounded:
            bounds = bounds.intersect(each)
        replicas = bounds.clamp(action.replicas.to)
        if replicas is None:
            reasons.append("no replica count satisfies every rejecting rule")
            return "reject", None
    via: Literal["pull-request"] | None = "pull-request" if any(f.via for f in binding) else None
    counter = Counter(replicas=replicas, via=via)
    reasons.append(f"counter-offer {counter.describe()} satisfies every rejecting rule")
    return "counter", counter
