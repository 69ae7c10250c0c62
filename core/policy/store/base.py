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
- An approved proposal is used once: `use_approval` marks it used by one write, atomically,
  and refuses every later use, whatever became of that write (a write that failed is retried by
  proposing again; nothing un-uses an approval). It uses only the target's latest approval, and
  only a decision `audit.attest` finds on the sealed chain: a decision edited where it is stored
  raises `audit.Tampered`, after a "use" record says so.
- Every write appends its audit records (`audit.AuditEntry`, chained by `audit.chain`) in the
  same transaction: "proposal" on propose; one "evaluation" per evaluation and a "decision" on
  decide (plus "approval" when it opens a request); "answer" per answer, and "decision" when
  the answer or an expiry ends the request; "use" when an approval is used. `record` appends
  entries for what happened outside the store (a mutation applied, a PR merged). The head (last
  seq and hash) is kept with them, sealed with the store's key (`audit.seal`).
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from core.errors import Conflict, InvalidArgument
from core.policy.actions import TargetRef
from core.policy.audit import AuditEntry, AuditHead, AuditKind, AuditRecord, AuditReport
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
    there = f"@{target.cluster}" if target.cluster else ""
    return f"{target.kind}/{target.namespace or ''}/{target.name}{there}"


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


@dataclass(frozen=True)
class Use:
    """Who used an approved proposal, and when (the write that took it up)."""

    by: str
    at: datetime


def unusable(record: ProposalRecord, target: TargetState, use: Use | None) -> Decision:
    """The approved decision `record` holds, if it may carry a write now; else Conflict saying
    why: not approved, superseded by a later approval of its target, or used already."""
    proposal, decision = record.proposal, record.decision
    if decision is None or not decision.approves:
        state = decision.outcome if decision else proposal.state
        raise Conflict(
            f"proposal {proposal.id} is {state}, not approved, so it cannot carry a write; "
            "get_proposal on the policy server shows why"
        )
    if target.proposal != proposal.id:
        raise Conflict(
            f"proposal {target.proposal} was approved for {decision.action.target} after "
            f"proposal {proposal.id}, which it supersedes; use proposal {target.proposal}, or "
            "propose again"
        )
    if use is not None:
        raise Conflict(
            f"proposal {proposal.id} was used already, by {use.by} at {use.at.isoformat()}: an "
            "approval carries one write, and a write that failed spends it too; propose again"
        )
    return decision


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

    def use_approval(
        self, proposal_id: str, *, by: str, now: datetime, dry_run: bool = False
    ) -> Decision:
        """Mark the approved proposal used by one write (`by`, an actor such as "agent
        dev-team"), once, and return its decision: the action the write may make.

        Atomic: of any number of concurrent callers one gets the decision and the others
        Conflict ("used already"). Conflict too when it is not approved or was superseded
        (`unusable`); Tampered when `audit.attest` does not find the decision on the sealed
        chain (a "use" record reports it first); NotFound for an unknown id. `dry_run` checks
        the same and writes nothing.
        """
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

    def verify_audit(self) -> AuditReport:
        """Everything `kubecrew audit verify` checks: the chain (`audit.verify`), the head's seal
        under the store's key, the stored form of each record (every column or field it is
        filtered on, and its canonical JSON), and each stored decision against its record."""
        ...

    def close(self) -> None: ...
