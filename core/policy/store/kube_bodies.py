"""How the store's documents sit in custom resources, and the claims each write commits.

A Proposal object's spec is what its creator asked: the proposal and its target key. Its status
is the store's: the proposal as the store holds it (its basis and state), its transcript and
decision as the pydantic models' JSON (what SQLite stores as text), `version` (the store's),
`writes` (how many writes it has seen, which claims are checked against), `used` (the write
that took up its approval), `target`, and `state` and `outcome` copied out for printer columns.
A proposal without a status was created but not yet opened by the store (`opened` does that,
from its spec alone). An ApprovalRequest object's status holds the request and a `revision`.
What a decide, an answer or a use changes is computed once, here, into a `Claim`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ValidationError

from core.connection import Json
from core.policy import audit
from core.policy.approvals import Settlement
from core.policy.audit import AuditEntry
from core.policy.proposals import (
    ApprovalRequest,
    Decision,
    Proposal,
    ProposalRecord,
    TranscriptEvent,
)
from core.policy.store.base import Use, proposed_event, target_key
from core.policy.store.kube_audit import new_batch, with_pending
from core.policy.store.kube_claims import Claim
from core.policy.store.kube_objects import object_name, spec_of, status_of


def dump(model: BaseModel) -> Json:
    return model.model_dump(mode="json")


def record(obj: Json) -> ProposalRecord:
    status: dict[str, Any] = status_of(obj)
    decision = status.get("decision")
    return ProposalRecord(
        proposal=Proposal.model_validate(status["proposal"]),
        version=int(status["version"]),
        transcript=[TranscriptEvent.model_validate(e) for e in status.get("transcript") or []],
        decision=None if decision is None else Decision.model_validate(decision),
    )


def is_open(obj: Json) -> bool:
    """Whether the store has opened this proposal (given it a status)."""
    return "proposal" in status_of(obj)


def asked(obj: Json) -> Proposal | None:
    """The proposal a Proposal object's creator asked for; None when it is not one (a body
    that does not parse, or an object not named for its id)."""
    try:
        proposal = Proposal.model_validate(spec_of(obj).get("proposal"))
    except ValidationError:
        return None
    return proposal if object_name("p", proposal.id) == obj["metadata"]["name"] else None


def opened(proposal: Proposal, basis: int) -> tuple[Proposal, Json]:
    """A new proposal as the store holds it, and the status that opens it (owing its record)."""
    stored = proposal.model_copy(update={"basis": basis, "state": "open"})
    status = {
        "proposal": dump(stored),
        "transcript": [dump(proposed_event(stored))],
        "version": 1,
        "writes": 1,
        "state": "open",
        "target": target_key(stored.action.target),
    }
    return stored, with_pending(status, new_batch([audit.proposed(stored)]))


def use(obj: Json) -> Use | None:
    used = status_of(obj).get("used")
    return None if not used else Use(by=str(used["by"]), at=datetime.fromisoformat(used["at"]))


def request(obj: Json) -> ApprovalRequest:
    return ApprovalRequest.model_validate(status_of(obj)["request"])


def decision_claim(
    current: ProposalRecord,
    obj: Json,
    events: Sequence[TranscriptEvent],
    decision: Decision,
    approval: ApprovalRequest | None,
) -> Claim:
    """A decide: the decision and its events, the request it opens, their audit entries."""
    state = "escalated" if decision.outcome == "escalated" else "decided"
    decided = current.proposal.model_copy(update={"state": state})
    proposal_id = current.proposal.id
    return Claim(
        proposal=proposal_id,
        writes=int(status_of(obj)["writes"]),
        fields=_decided(decided, decision, current.version + 1),
        events=[dump(event) for event in events],
        batch=new_batch(audit.decided(proposal_id, events, decision, approval)),
        approval=None
        if approval is None
        else {"id": approval.id, "revision": 0, "request": dump(approval)},
    )


def settlement_claim(
    current: ProposalRecord, proposal: Json, request_obj: Json, settled: Settlement
) -> Claim:
    """An answer or an expiry, as `approvals.settle` / `lapse` computed it."""
    fields: Json = {}
    if settled.decision is not None:
        decided = current.proposal.model_copy(update={"state": "decided"})
        fields = _decided(decided, settled.decision, current.version + 1)
    return Claim(
        proposal=current.proposal.id,
        writes=int(status_of(proposal)["writes"]),
        fields=fields,
        events=[dump(event) for event in settled.events],
        batch=new_batch(settled.entries),
        approval={
            "id": settled.request.id,
            "revision": int(status_of(request_obj).get("revision") or 0),
            "request": dump(settled.request),
        },
    )


def use_claim(obj: Json, used: AuditEntry) -> Claim:
    """A use of the approval: `used` (an `audit.used` entry) marks the proposal taken up."""
    return Claim(
        proposal=used.subject,
        writes=int(status_of(obj)["writes"]),
        fields={"used": {"by": used.actor, "at": used.at.isoformat()}},
        events=[],
        batch=new_batch([used]),
    )


def _decided(proposal: Proposal, decision: Decision, version: int) -> Json:
    return {
        "proposal": dump(proposal),
        "decision": dump(decision),
        "state": proposal.state,
        "outcome": decision.outcome,
        "version": version,
    }
