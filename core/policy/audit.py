"""The audit log's records, chained by hash, and the checks that find a changed or missing one.

Every write the policy store makes (a proposal, each evaluation, a decision, an approval request
and its answer, the use of an approval by a write) and every mutation an agent reports is one
`AuditRecord`, appended in the same transaction as the write it records. Each record carries the
hash of the one before it, and its own hash covers its fields and that link, so changing any
field of any record, deleting one, or reordering them breaks the chain at that record. The store
keeps the head (the last sequence number and hash) apart from the records, so cutting records
off the end is found too, and seals it (`seal`): an HMAC of the head under a key only the
store's writer holds (a 0600 file beside the SQLite store; a Secret only the store's identity
may read on Kubernetes). Whoever lacks the key cannot rewrite the chain and its head to match:
`unsealed` finds it (`Store.verify_audit` runs every check here). That is tamper-evident
against whoever lacks the key, not tamper-proof: someone holding the key (the store's own
identity, root on the machine, a cluster admin) can rewrite the whole log undetected, and
anyone able to write can delete it, which shows.

A decision is only as good as its record: `decision_entry` carries a hash of the whole decision,
and `attest` is the one check every backend makes before it lets an approval be used, that the
stored decision is the one the sealed chain last recorded for its proposal. A decision edited
where it is stored (a row, a custom resource's status) fails it with `Tampered`.

The entry builders at the end (`proposed`, `decided`, `answered`, `used`) say what each store
write records, once for every backend, so SQLite and Kubernetes stores keep identical logs.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from core.errors import ToolError
from core.policy.proposals import (
    ApprovalAnswer,
    ApprovalRequest,
    Decision,
    Evaluation,
    Proposal,
    TranscriptEvent,
)

AuditKind = Literal["proposal", "evaluation", "decision", "approval", "answer", "use", "mutation"]
GENESIS = "0" * 64  # the `previous` of the first record


class Tampered(ToolError):
    """A store's record disagrees with its sealed audit chain: it was edited outside the store.

    Not retryable, and not the caller's mistake: a person looks (`kubecrew audit verify` names
    every break). A ToolError like the rest of `core.errors`, so every channel shows its message.
    """


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
    Whether the head itself is the store's is `unsealed`'s question (the store holds the key).
    """
    return _links(records, GENESIS, 1) + _against_head(records, head)


def seal(key: bytes, head: AuditHead) -> str:
    """The head's seal: an HMAC-SHA256 of its seq and hash under the store's key."""
    return hmac.new(key, f"{head.seq}:{head.hash}".encode(), hashlib.sha256).hexdigest()


def unsealed(head: AuditHead, stored: str, key: bytes) -> list[str]:
    """The problem with a head whose stored seal is not `key`'s seal of it; [] when it is."""
    if hmac.compare_digest(stored, seal(key, head)):
        return []
    what = "carries no seal" if not stored else "carries a seal the store's key did not make"
    return [
        f"the head ({head.seq}, {head.hash[:12]}) {what}: the head and the records before it "
        f"were rewritten by someone without the store's key, or the key was replaced"
    ]


def attest(
    proposal_id: str,
    decision: Decision,
    tail: Sequence[AuditRecord],
    head: AuditHead,
    *,
    sealed: bool,
) -> str:
    """Why `decision` is not the one the sealed chain last recorded for its proposal; "" if it is.

    `tail` is the log from the proposal's last "decision" record (as the store's index finds it)
    on, read after `head`; `sealed` says whether the store's key made the head's seal. The tail's
    links and hashes are checked up to the sealed head, so neither an edited decision nor a
    record rewritten to match one passes without the key. Both backends call this before an
    approval is used (`Store.use_approval`).
    """
    edited = f"the decision of proposal {proposal_id} was edited outside the store"
    after = "; it is not used. `kubecrew audit verify` names what changed"
    if not sealed:
        return f"{edited}, or its audit log was: the log's head is not sealed by the store{after}"
    tail = [record for record in tail if record.seq <= head.seq]
    if not tail:
        return f"{edited}: the audit log records no decision for it{after}"
    broken = _links(tail, tail[0].previous, tail[0].seq) + _against_head(tail, head)
    if broken:
        return f"{edited}, or its audit log was: {broken[0]}{after}"
    recorded = [r for r in tail if r.kind == "decision" and r.subject == proposal_id]
    if not recorded or _entry(recorded[-1]) != decision_entry(proposal_id, decision):
        seq = f" (record {recorded[-1].seq})" if recorded else ""
        return f"{edited}: it is not the decision the audit log recorded for it{seq}{after}"
    return ""


def decisions(stored: Mapping[str, Decision], records: Sequence[AuditRecord]) -> list[str]:
    """Every stored decision that is not the one the log last recorded for its proposal."""
    last = {r.subject: r for r in records if r.kind == "decision"}
    problems = []
    for proposal_id, decision in sorted(stored.items()):
        record = last.get(proposal_id)
        if record is not None and record.expected_hash() != record.hash:
            continue  # `verify` names the record; comparing with it says nothing more
        if record is None or _entry(record) != decision_entry(proposal_id, decision):
            held = f"record {record.seq}" if record is not None else "no record"
            problems.append(
                f"proposal {proposal_id}: its stored decision ({decision.outcome} by "
                f"{decision.decided_by}) is not the one the audit log holds ({held}): it was "
                f"edited outside the store"
            )
    return problems


@dataclass(frozen=True)
class AuditReport:
    """What `Store.verify_audit` found: the head it read, how many records, every problem."""

    head: AuditHead
    records: int
    problems: list[str]


def _entry(record: AuditRecord) -> AuditEntry:
    return AuditEntry.model_validate(record.model_dump(include=set(AuditEntry.model_fields)))


def _links(records: Sequence[AuditRecord], previous: str, expected_seq: int) -> list[str]:
    """Each record's number, link and hash, walking on from `previous` at `expected_seq`."""
    problems: list[str] = []
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
    return problems


def _against_head(records: Sequence[AuditRecord], head: AuditHead) -> list[str]:
    """Whether the log ends where the head says (records past it are appends, not changes)."""
    last = records[-1] if records else None
    if last is None:
        return (
            [f"the log is empty but its head says {head.seq} records were written"]
            if head.seq
            else []
        )
    if (last.seq, last.hash) == (head.seq, head.hash):
        return []
    if head.seq > last.seq:
        cut = f"{head.seq}" if head.seq == last.seq + 1 else f"{last.seq + 1}-{head.seq}"
        return [
            f"record {cut} is missing from the end (deleted?): the head says "
            f"{head.seq} records were written"
        ]
    if not any((r.seq, r.hash) == (head.seq, head.hash) for r in records):
        return [
            f"the last record is {last.seq} ({last.hash[:12]}) but the head says "
            f"{head.seq} ({head.hash[:12]}): the head or the tail was changed"
        ]
    return []


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
    """A decision, with a hash of all of it (`attest` compares a stored decision with it)."""
    return AuditEntry(
        at=decision.at,
        actor=str(decision.decided_by),
        kind="decision",
        subject=proposal_id,
        summary=decision.describe(),
        citations=[str(citation) for citation in decision.citations],
        result=decision.outcome,
        details={"decision": decision_digest(decision)},
    )


def decision_digest(decision: Decision) -> str:
    """sha256 over the whole decision as canonical JSON."""
    canonical = json.dumps(
        decision.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def used(proposal_id: str, decision: Decision, *, by: str, at: datetime) -> AuditEntry:
    """An approval taken up by a write, before the write: spent, whatever the write does next."""
    return AuditEntry(
        at=at,
        actor=by,
        kind="use",
        subject=proposal_id,
        summary=f"uses the approval of {decision.action.describe()} for one write; it is spent "
        f"whether that write succeeds or fails (to try again, propose again)",
        citations=[str(citation) for citation in decision.citations],
        result="claimed",
        details={"target": str(decision.action.target)},
    )


def refused_use(proposal_id: str, reason: str, *, by: str, at: datetime) -> AuditEntry:
    """A use refused because the stored decision is not the recorded one (`attest`)."""
    return AuditEntry(
        at=at,
        actor=by,
        kind="use",
        subject=proposal_id,
        summary=reason,
        result="refused: the decision was edited outside the store",
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
