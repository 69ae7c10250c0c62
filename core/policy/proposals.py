"""The negotiation's records: a Proposal, stakeholders' Evaluations, the Decision, the transcript.

These are the nouns every store backend persists and every reader prints: plain pydantic
models, serialised as JSON, so the SQLite rows and (later) the Kubernetes custom resources hold
the same documents. They know nothing of storage or of how a decision is reached
(`negotiation` does that); they only say what was proposed, who answered what citing which
rule, and how it ended.
"""

from __future__ import annotations

import re
import secrets
from datetime import datetime, timedelta
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from core.errors import InvalidArgument
from core.policy.actions import Action
from core.policy.documents.common import Principals
from core.policy.findings import Citation

ProposalState = Literal["open", "decided", "escalated"]
Verdict = Literal["accept", "reject", "counter"]
Outcome = Literal["approved", "approved-as-countered", "rejected", "escalated"]
# The outcomes under which the proposed (or countered) action may be carried out.
APPROVED: tuple[Outcome, ...] = ("approved", "approved-as-countered")
EventKind = Literal["proposed", "evaluated", "decided", "approval-requested", "answered", "expired"]


_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")


def record_id(value: str, *, argument: str) -> str:
    """A proposal or approval id as the store makes them (`p-1a2b3c4d`), nothing else."""
    if not _ID.match(value):
        raise InvalidArgument(
            f"{argument} {value!r} is not an id such as p-1a2b3c4d; list_proposals and "
            "list_approvals show the ids"
        )
    return value


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Identity(_Record):
    """Who acts: an agent (by its agent name) or a person (as the identity provider names them).

    `groups` are the groups the channel that authenticated this identity vouches for (the API
    server's answer for a kubeconfig user, the CLI's configured person, a Slack user's mapping);
    approvals are authorised by name or by one of these groups.
    """

    kind: Literal["agent", "person"]
    name: Annotated[str, Field(min_length=1)]
    groups: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.kind} {self.name}"


class Impact(_Record):
    savings_per_month: Annotated[float, Field(ge=0)] | None = None  # in the org's currency
    risk: Literal["low", "medium", "high"] = "low"


class Proposal(_Record):
    id: str
    proposer: Identity
    action: Action
    rationale: str
    impact: Impact = Impact()
    deadline: datetime | None = None
    state: ProposalState = "open"
    created: datetime
    # What the policies judge the action by: the live target and its metrics, as proposed.
    target: dict[str, Any] | None = None
    metrics: dict[str, float] = {}
    # Whether the proposer takes a counter-offer; "refuse" sends a counter to a person instead.
    counters: Literal["accept", "refuse"] = "accept"
    # The version of the target's approvals this was proposed against (optimistic locking).
    basis: int = 0


class Evaluation(_Record):
    stakeholder: str  # the team, or the proposer answering a counter-offer
    agent: str | None = None  # the agent that answered for the team
    round: int
    verdict: Verdict
    citations: list[Citation] = []
    counter: Action | None = None  # verdict counter: the action this stakeholder would accept
    reasons: list[str] = []

    def describe(self) -> str:
        who = self.stakeholder + (f" ({self.agent})" if self.agent else "")
        text = f"{who} {self.verdict}s"
        if self.counter is not None:
            text += f" with {self.counter.describe()}"
        return text + "".join(f"; cites {citation}" for citation in self.citations)


class Decision(_Record):
    outcome: Outcome
    action: Action  # the final action: as proposed, or as countered
    reasons: list[str]
    rounds: int
    decided_by: Identity
    escalate_to: Principals | None = None  # escalated: the people who decide now
    at: datetime
    citations: list[Citation] = []  # the rules that shaped it, for the audit log

    @property
    def approves(self) -> bool:
        """Whether the decided action may be carried out."""
        return self.outcome in APPROVED

    def describe(self) -> str:
        text = self.outcome.replace("-", " ")
        if self.outcome == "approved-as-countered" and self.action.replicas is not None:
            text += f" ({self.action.replicas.to})"
        text += f": {self.action.describe()} after {self.rounds} round(s)"
        if self.escalate_to is not None:
            text += f", to {self.escalate_to.describe()}"
        return text


class TranscriptEvent(_Record):
    """One line of the negotiation, in order: the proposal, each evaluation, the decision, and
    after an escalation the approval request, each person's answer and the final decision."""

    seq: int
    at: datetime
    kind: EventKind
    actor: str
    evaluation: Evaluation | None = None
    decision: Decision | None = None
    note: str = ""

    def describe(self) -> str:
        if self.evaluation is not None:
            body = f"round {self.evaluation.round}: {self.evaluation.describe()}"
            return body + "".join(f"\n    {reason}" for reason in self.evaluation.reasons)
        if self.decision is not None:
            body = f"decision: {self.decision.describe()}"
            return body + "".join(f"\n    {reason}" for reason in self.decision.reasons)
        return self.note


class ProposalRecord(_Record):
    """A proposal as a store holds it: with its row version, transcript and decision."""

    proposal: Proposal
    version: int
    transcript: list[TranscriptEvent]
    decision: Decision | None = None


# Approval requests: what an escalated proposal waits on (`approvals` says how they end).
ApprovalState = Literal["pending", "granted", "denied", "expired"]
Channel = Literal["cli", "slack", "pull-request", "mcp"]
AnswerVerdict = Literal["grant", "deny"]
# Why a request was opened: an approval rule asked for people by name; the proposer refused a
# counter-offer; counters did not converge; a tie the org sends to a person; a rule that could
# not be evaluated. Only "approval-rule" never names the org's arbiter.
Cause = Literal["approval-rule", "counter-refused", "no-agreement", "tie", "unevaluable"]
DEFAULT_EXPIRY = timedelta(hours=24)


class ApprovalAnswer(_Record):
    by: Identity
    via: Channel
    verdict: AnswerVerdict
    reason: str = ""
    at: datetime


class ApprovalRequest(_Record):
    id: str
    proposal: str
    action: Action  # what the person approves: the action as the negotiation left it
    approvers: Principals
    min_approvals: Annotated[int, Field(ge=1)] = 1
    reasons: list[str]  # why a person decides: the rules and rounds that escalated it
    cause: Cause = "approval-rule"  # requests stored before causes were recorded came from rules
    requested_at: datetime
    expires_at: datetime
    state: ApprovalState = "pending"
    answers: list[ApprovalAnswer] = []
    claimed_by: str | None = None  # the waiter that resumed with the ended request

    @property
    def ended(self) -> bool:
        return self.state != "pending"

    def describe(self) -> str:
        text = f"{self.id} ({self.state}): {self.action.describe()} for proposal {self.proposal}"
        return text + f", by {self.approvers.describe()}"


def new_request_id() -> str:
    return f"a-{secrets.token_hex(4)}"
