"""The audit log's records, chained by hash, and the check that finds a changed or missing one.

Every write the policy store makes (a proposal, each evaluation, a decision, an approval request
and its answer) and every mutation an agent reports is one `AuditRecord`, appended in the same
transaction as the write it records. Each record carries the hash of the one before it, and its
own hash covers its fields and that link, so changing any field of any record, deleting one, or
reordering them breaks the chain at that record. The store also keeps the head (the last
sequence number and hash) apart from the records, so cutting records off the end is found too.
That is tamper-evident, not tamper-proof: someone able to rewrite the whole file can rewrite the
whole chain; what it catches is an edit to some of the history, which is what people do.

The entry builders at the end (`proposed`, `decided`, `answered`) say what each store write
records, once for every backend, so SQLite and Kubernetes stores keep identical logs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from core.policy.proposals import (
    ApprovalAnswer,
    ApprovalRequest,
    Decision,
    Evaluation,
    Proposal,
    TranscriptEvent,
)

AuditKind = Literal["proposal", "evaluation", "decision", "approval", "answer", "mutation"]
GENESIS = "0" * 64  # the `previous` of the first record


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AuditEntry(_Record):
    """What happened, before the store numbers and chains it: who, what, why, and the result."""

    at: datetime
    actor: Annotated[str, Field(min_length=1)]  # "agent cluster-operator", "person alice"
    kind: AuditKind
    subject: Annotated[str, Field(min_length=1)]  # a proposal or approval id, or a target
    summary: str  # what, in one line
    citations: list[str] = []  # why: "CapacityPolicy shop-min-capacity / rule min-replicas"
    result: str = ""  # "approved-as-countered", "granted", "applied", "failed: ..."
    # Facts a later reader counts or matches on, so nobody parses `summary`: the proposal a
    # mutation carried out, the pods it evicted, ...
    details: dict[str, str | int] = {}


class AuditRecord(AuditEntry):
    seq: Annotated[int, Field(ge=1)]
    previous: str  # the hash of record seq - 1 (GENESIS for the first)
    hash: str

    def expected_hash(self) -> str:
        return digest(self.seq, self.previous, self)


class AuditHead(_Record):
    """The last record's number and hash, kept apart from the records (0 and GENESIS: empty)."""

    seq: int = 0
    hash: str = GENESIS


def digest(seq: int, previous: str, entry: AuditEntry) -> str:
    """sha256 over the record's fields as canonical JSON (sorted keys, no spaces) and its link."""
    fields = entry.model_dump(mode="json", include=set(AuditEntry.model_fields))
    if not fields["details"]:
        del fields["details"]  # so records written before `details` existed keep their hashes
    canonical = json.dumps(
        {"seq": seq, "previous": previous, **fields},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def chain(head: AuditHead, entries: Sequence[AuditEntry]) -> list[AuditRecord]:
    """The records `entries` become when appended after `head`, in order."""
    records: list[AuditRecord] = []
    seq, previous = head.seq, head.hash
    for entry in entries:
        seq += 1
        link = digest(seq, previous, entry)
        records.append(AuditRecord(seq=seq, previous=previous, hash=link, **entry.model_dump()))
        previous = link
    return records


def verify(records: Sequence[AuditRecord], head: AuditHead) -> list[str]:
    """Every break in the chain, in words naming the record: empty when the log is intact.

    `records` is the whole log as read, in stored order; `head` is what the store said its last
    record was, read BEFORE the records: records appended in between then lie past the head, on
    its chain, and are judged like the others (links and hashes) without being called a change.
    """
    problems: list[str] = []
    previous, expected_seq = GENESIS, 1
    for record in records:
        if record.seq != expected_seq:
            missing = (
                f"{expected_seq}"
                if record.seq == expected_seq + 1
                else (f"{expected_seq}-{record.seq - 1}")
            )
            if record.seq > expected_seq:
                problems.append(
                    f"record {missing} is missing (deleted?) before record {record.seq}"
                )
            else:
                problems.append(f"record {record.seq} is out of order after {expected_seq - 1}")
        if record.previous != previous:
            problems.append(
                f"record {record.seq} does not follow the record before it "
                f"(its link {record.previous[:12]} is not {previous[:12]}): "
                f"a record before it was changed, deleted or inserted"
            )
        if record.expected_hash() != record.hash:
            problems.append(
                f"record {record.seq} ({record.kind} {record.subject}) was modified: "
                f"its fields no longer match its hash"
            )
        previous, expected_seq = record.hash, record.seq + 1
    last = records[-1] if records else None
    if last is None and head.seq:
        problems.append(f"the log is empty but its head says {head.seq} records were written")
    elif last is not None and (last.seq, last.hash) != (head.seq, head.hash):
        if head.seq > last.seq:
            cut = f"{head.seq}" if head.seq == last.seq + 1 else f"{last.seq + 1}-{head.seq}"
            problems.append(
                f"record {cut} is missing from the end (deleted?): the head says "
                f"{head.seq} records were written"
            )
        elif not any((r.seq, r.hash) == (head.seq, head.hash) for r in records):
            problems.append(
                f"the last record is {last.seq} ({last.hash[:12]}) but the head says "
                f"{head.seq} ({head.hash[:12]}): the head or the tail was changed"
            )
    return problems


# --- what each store write records ----------------------------------------------------------


def proposed(proposal: Proposal) -> AuditEntry:
    return AuditEntry(
        at=proposal.created,
        actor=str(proposal.proposer),
        kind="proposal",
        subject=proposal.id,
        summary=f"proposes {proposal.action.describe()}: {proposal.rationale}",
        result="open",
    )


def decided(
    proposal_id: str,
    events: Sequence[TranscriptEvent],
    decision: Decision,
    approval: ApprovalRequest | None = None,
) -> list[AuditEntry]:
    """A decide: each evaluation in `events`, the decision, and the request it opens."""
    entries = [
        _evaluated(proposal_id, event.at, event.evaluation)
        for event in events
        if event.evaluation is not None
    ]
    entries.append(decision_entry(proposal_id, decision))
    if approval is not None:
        entries.append(
            AuditEntry(
                at=approval.requested_at,
                actor=str(decision.decided_by),
                kind="approval",
                subject=approval.id,
                summary=f"{approval.describe()}, until {approval.expires_at.isoformat()}",
                citations=[str(citation) for citation in decision.citations],
                result=approval.state,
            )
        )
    return entries


def decision_entry(proposal_id: str, decision: Decision) -> AuditEntry:
    return AuditEntry(
        at=decision.at,
        actor=str(decision.decided_by),
        kind="decision",
        subject=proposal_id,
        summary=decision.describe(),
        citations=[str(citation) for citation in decision.citations],
        result=decision.outcome,
    )


def answered(request: ApprovalRequest, given: ApprovalAnswer) -> AuditEntry:
    """A person's answer; `request` as it stands after it (its state is the result)."""
    said = {"grant": "grants", "deny": "denies"}[given.verdict]
    summary = f"{said} {request.action.describe()} for proposal {request.proposal}"
    return AuditEntry(
        at=given.at,
        actor=str(given.by),
        kind="answer",
        subject=request.id,
        summary=summary + f" via {given.via}" + (f": {given.reason}" if given.reason else ""),
        result=request.state,
    )


def _evaluated(proposal_id: str, at: datetime, evaluation: Evaluation) -> AuditEntry:
    # Stakeholders answer through their agent; a team without one is named as the team.
    actor = f"agent {evaluation.agent}" if evaluation.agent else f"team {evaluation.stakeholder}"
    summary = f"round {evaluation.round}: {evaluation.stakeholder} {evaluation.verdict}s"
    counter = evaluation.counter
    return AuditEntry(
        at=at,
        actor=actor,
        kind="evaluation",
        subject=proposal_id,
        summary=summary + (f" with {counter.describe()}" if counter is not None else ""),
        citations=[str(citation) for citation in evaluation.citations],
        result=evaluation.verdict,
    )
