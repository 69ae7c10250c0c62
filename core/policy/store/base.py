"""The one interface every policy store backend implements, and the rules it must keep.

SQLite is the embedded default; the Kubernetes backend (custom resources) implements the same
protocol and passes the same tests. The rules are the store's, not its callers':

- Optimistic locking: every proposal has a version; `decide` names the version it read, and a
  write that lost a race raises Conflict, so the caller re-reads and deliberates again.
- A proposal is decided once: `decide` only moves an open proposal, whatever the versions say.
- Approvals on one target are serialised: each target has an approval version, a proposal
  records the version it was proposed against (`basis`), and an approval commits only while
  the target is still at that version. So two conflicting proposals are never both approved;
  the later one sees the earlier's decision.
- An escalated decision comes with its ApprovalRequest, written with it. An approval request
  ends once (granted, denied or expired), and its end decides its proposal in the same write:
  granted -> "approved" by the people who granted (if the target is still at the proposal's
  basis, else "rejected" as superseded), denied or expired -> "rejected".
- An ended request is claimed once: `claim` returns it to the first waiter and None to any
  other, so the agent waiting for an answer acts on it exactly once.
- Every write appends its audit records (`audit.AuditEntry`, chained by `audit.chain`) in the
  same transaction: "proposal" on propose; one "evaluation" per evaluation and a "decision" on
  decide (plus "approval" when it opens a request); "answer" per answer, and "decision" when
  the answer or an expiry ends the request. `record` appends entries for what happened outside
  the store (a mutation applied, a PR merged). The head (last seq and hash) is kept with them.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from core.errors import InvalidArgument
from core.policy.actions import TargetRef
from core.policy.audit import AuditEntry, AuditHead, AuditKind, AuditRecord
from core.policy.proposals import (
    ApprovalAnswer,
    ApprovalRequest,
    ApprovalState,
    Decision,
    Proposal,
    ProposalRecord,
    ProposalState,
    TranscriptEvent,
)


class TargetState(BaseModel):
    """The approvals a target has seen: how many, and the latest one."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = 0
    proposal: str | None = None  # the id of the latest approved proposal


def target_key(target: TargetRef) -> str:
    return f"{target.kind}/{target.namespace or ''}/{target.name}"


def proposed_event(proposal: Proposal) -> TranscriptEvent:
    """A transcript's first line, as every backend writes it."""
    return TranscriptEvent(
        seq=0,
        at=proposal.created,
        kind="proposed",
        actor=str(proposal.proposer),
        note=f"proposes {proposal.action.describe()}: {proposal.rationale}",
    )


def decided_state(
    proposal_id: str, decision: Decision, approval: ApprovalRequest | None
) -> ProposalState:
    """The state `decide` moves a proposal to, after checking the request goes with escalation."""
    state: ProposalState = "escalated" if decision.outcome == "escalated" else "decided"
    if (approval is not None) != (state == "escalated"):
        raise InvalidArgument(
            "an escalated decision comes with its approval request, and only it does; "
            f"got outcome {decision.outcome} with {'a' if approval else 'no'} request"
        )
    if approval is not None and approval.proposal != proposal_id:
        raise InvalidArgument(f"{approval.id} is for proposal {approval.proposal}")
    return state


class Store(Protocol):
    def propose(self, proposal: Proposal) -> ProposalRecord:
        """Store a new open proposal, its `basis` set to the target's current version."""
        ...

    def get(self, proposal_id: str) -> ProposalRecord:
        """The proposal, or NotFound naming how to list the others."""
        ...

    def list(self, *, state: ProposalState | None = None) -> list[Proposal]:
        """Every proposal, oldest first, or only those in `state`."""
        ...

    def target(self, target: TargetRef) -> TargetState: ...

    def decide(
        self,
        proposal_id: str,
        *,
        version: int,
        events: Sequence[TranscriptEvent],
        decision: Decision,
        approval: ApprovalRequest | None = None,
    ) -> ProposalRecord:
        """Record the evaluations and the decision at once, or raise Conflict and change nothing.

        An "escalated" decision must come with its `approval` request (pending), stored with it.
        """
        ...

    # --- approvals ----------------------------------------------------------------------------

    def approval(self, request_id: str) -> ApprovalRequest:
        """The request, or NotFound naming `kubecrew approvals list`."""
        ...

    def approvals(self, *, state: ApprovalState | None = None) -> builtins.list[ApprovalRequest]:
        """Every request, oldest first, or only those in `state`."""
        ...

    def answer(self, request_id: str, given: ApprovalAnswer, *, now: datetime) -> ApprovalRequest:
        """Add an (already authorised) answer to a pending request and end it when it decides.

        Past `expires_at` the request expires instead (and Conflict says so); an ended request
        raises Conflict naming its state. Ending it decides its proposal in the same write.
        """
        ...

    def expire(self, *, now: datetime) -> builtins.list[ApprovalRequest]:
        """End every pending request past its `expires_at` as expired (rejecting its proposal);
        return those this call ended."""
        ...

    def claim(self, request_id: str, *, waiter: str) -> ApprovalRequest | None:
        """The ended request, marked claimed by `waiter`, if nobody claimed it before; else None.
        Conflict if it has not ended."""
        ...

    # --- audit --------------------------------------------------------------------------------

    def record(self, entries: Sequence[AuditEntry]) -> builtins.list[AuditRecord]:
        """Append entries for what happened outside the store; return them as chained."""
        ...

    def audit(
        self,
        *,
        after: int = 0,
        limit: int | None = None,
        subject: str | None = None,
        kind: AuditKind | None = None,
    ) -> builtins.list[AuditRecord]:
        """Records with seq > `after`, oldest first, of `subject` and `kind`, at most `limit`."""
        ...

    def audit_head(self) -> AuditHead: ...

    def close(self) -> None: ...
