"""How the store's documents sit in custom resources, and the claims each write commits.

A Proposal object's spec holds the proposal, its transcript and decision as the pydantic
models' JSON (what SQLite stores as text), plus `version` (the store's), `writes` (how many
writes it has seen, which claims are checked against), and `state`, `target` and `outcome`
copied out for printer columns. An ApprovalRequest object's spec holds the request and a
`revision`. What a decide or an answer changes is computed once, here, into a `Claim`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from core.connection import Json
from core.policy import audit
from core.policy.approvals import Settlement
from core.policy.proposals import (
    ApprovalRequest,
    Decision,
    Proposal,
    ProposalRecord,
    TranscriptEvent,
)
from core.policy.store.kube_audit import new_batch
from core.policy.store.kube_claims import Claim
from core.policy.store.kube_objects import spec_of


def dump(model: BaseModel) -> Json:
    return model.model_dump(mode="json")


def record(obj: Json) -> ProposalRecord:
    spec: dict[str, Any] = spec_of(obj)
    decision = spec.get("decision")
    return ProposalRecord(
        proposal=Proposal.model_validate(spec["proposal"]),
        version=int(spec["version"]),
        transcript=[TranscriptEvent.model_validate(e) for e in spec.get("transcript") or []],
        decision=None if decision is None else Decision.model_validate(decision),
    )


def request(obj: Json) -> ApprovalRequest:
    return ApprovalRequest.model_validate(spec_of(obj)["request"])


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
        writes=int(spec_of(obj)["writes"]),
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
        writes=int(spec_of(proposal)["writes"]),
        fields=fields,
        events=[dump(event) for event in settled.events],
        batch=new_batch(settled.entries),
        approval={
            "id": settled.request.id,
            "revision": int(spec_of(request_obj).get("revision") or 0),
            "request": dump(settled.request),
        },
    )


def _decided(proposal: Proposal, decision: Decision, version: int) -> Json:
    return {
        "proposal": dump(proposal),
        "decision": dump(decision),
        "state": proposal.state,
        "outcome": decision.outcome,
        "version": version,
    }
