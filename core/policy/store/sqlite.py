"""The embedded policy store: one SQLite file, shared safely by several local processes.

WAL mode lets readers run while one process writes; every write is one `BEGIN IMMEDIATE`
transaction, so a decision's evaluations, its decision and the target's approval version land
together or not at all (a crash in the middle leaves the proposal open, never half decided).
The rules of `store.base` are enforced here in SQL: the decision is a conditional UPDATE on the
proposal's version and state, and an approval a conditional UPDATE on the target's version.
An approval request's answer is read and written in one such transaction too, so two people
answering at once are serialised: the second sees the first's answer, or the ended request.
What an answer or expiry does is computed by `approvals.settle` / `lapse` (shared with every
backend); this module only writes it. Every write appends its audit records (`sqlite_audit`)
before it commits, sealing the head with the key beside the file (`sqlite_files`, which also
keeps both files 0600). An approval is used once through the `uses` table (`sqlite_uses`),
checked and written in one transaction after `audit.attest` found its decision on the chain.
Records are stored as the JSON of their pydantic models, so every backend holds the same text.
Tables are created if missing, so a file from an older version opens.
"""

from __future__ import annotations

import builtins
import os
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from pydantic import ValidationError

from core.errors import Conflict, NotFound, Unavailable
from core.files import private
from core.home import state_home
from core.policy import audit
from core.policy.actions import TargetRef
from core.policy.approvals import Settlement, ended_message, expired_message, lapse, settle
from core.policy.audit import AuditEntry, AuditHead, AuditKind, AuditRecord, AuditReport, Tampered
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
from core.policy.store import sqlite_approvals, sqlite_audit, sqlite_files, sqlite_uses
from core.policy.store.base import (
    TargetState,
    Use,
    decided_state,
    proposed_event,
    target_key,
    unusable,
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS proposals (
    id TEXT PRIMARY KEY,
    target TEXT NOT NULL,
    state TEXT NOT NULL,
    version INTEGER NOT NULL,
    created TEXT NOT NULL,
    body TEXT NOT NULL,
    decision TEXT
);
CREATE TABLE IF NOT EXISTS events (
    proposal TEXT NOT NULL REFERENCES proposals(id),
    seq INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (proposal, seq)
);
CREATE TABLE IF NOT EXISTS targets (
    target TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    proposal TEXT NOT NULL
);
"""


def default_path(environ: Mapping[str, str] = os.environ) -> Path:
    """The store in the state of the cluster the crew works on (`core.home`): its proposals,
    approvals and audit are that cluster's."""
    return state_home(environ) / "policy" / "store.sqlite"


class SqliteStore:
    def __init__(self, path: Path, *, timeout: float = 30.0) -> None:
        self.path = path
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            private(path)
            # Autocommit mode: transactions are the explicit BEGIN IMMEDIATE blocks below.
            self._db = sqlite3.connect(path, timeout=timeout, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.executescript(
                _SCHEMA + sqlite_approvals.SCHEMA + sqlite_audit.SCHEMA + sqlite_uses.SCHEMA
            )
            with self._writing() as db:
                sqlite_audit.upgrade(db)
                sealed = bool(sqlite_audit.sealed_head(db)[1])
                self._key = sqlite_files.audit_key(path, sealed=sealed)
                sqlite_audit.start(db, self._key)
        except (sqlite3.Error, OSError) as exc:
            raise Unavailable(
                f"cannot open the policy store {path}: {exc}; check the path is a writable "
                f"file, or give another with --store"
            ) from exc

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise Unavailable(
                f"the policy store {self.path} stayed locked by another process ({exc}); "
                f"retry in a moment"
            ) from exc
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def propose(self, proposal: Proposal) -> ProposalRecord:
        key = target_key(proposal.action.target)
        with self._writing() as db:
            basis = self._target(key).version
            stored = proposal.model_copy(update={"basis": basis, "state": "open"})
            event = proposed_event(proposal)
            try:
                db.execute(
                    "INSERT INTO proposals (id, target, state, version, created, body) "
                    "VALUES (?, ?, 'open', 1, ?, ?)",
                    (proposal.id, key, proposal.created.isoformat(), stored.model_dump_json()),
                )
            except sqlite3.IntegrityError as exc:
                raise Conflict(
                    f"proposal {proposal.id} already exists; propose under a new id"
                ) from exc
            db.execute(
                "INSERT INTO events (proposal, seq, body) VALUES (?, 0, ?)",
                (proposal.id, event.model_dump_json()),
            )
            sqlite_audit.append(db, [audit.proposed(stored)], self._key)
        return ProposalRecord(proposal=stored, version=1, transcript=[event])

    def get(self, proposal_id: str) -> ProposalRecord:
        # One read transaction, so the row and its transcript are one snapshot.
        self._db.execute("BEGIN")
        try:
            return self._read(proposal_id)
        finally:
            self._db.execute("COMMIT")

    def _read(self, proposal_id: str) -> ProposalRecord:
        row = self._db.execute(
            "SELECT body, version, decision FROM proposals WHERE id = ?", (proposal_id,)
        ).fetchone()
        if row is None:
            raise NotFound(
                f"no proposal {proposal_id} in {self.path}; `kubecrew proposals list` shows them"
            )
        events = self._db.execute(
            "SELECT body FROM events WHERE proposal = ? ORDER BY seq", (proposal_id,)
        ).fetchall()
        body, version, decision = row
        return ProposalRecord(
            proposal=Proposal.model_validate_json(body),
            version=version,
            transcript=[TranscriptEvent.model_validate_json(e) for (e,) in events],
            decision=None if decision is None else Decision.model_validate_json(decision),
        )

    def list(self, *, state: ProposalState | None = None) -> builtins.list[Proposal]:
        query = "SELECT body FROM proposals"
        rows = (
            self._db.execute(query + " WHERE state = ? ORDER BY created, id", (state,))
            if state
            else self._db.execute(query + " ORDER BY created, id")
        )
        return [Proposal.model_validate_json(body) for (body,) in rows.fetchall()]

    def target(self, target: TargetRef) -> TargetState:
        return self._target(target_key(target))

    def _target(self, key: str) -> TargetState:
        row = self._db.execute(
            "SELECT version, proposal FROM targets WHERE target = ?", (key,)
        ).fetchone()
        return TargetState() if row is None else TargetState(version=row[0], proposal=row[1])

    def decide(
        self,
        proposal_id: str,
        *,
        version: int,
        events: Sequence[TranscriptEvent],
        decision: Decision,
        approval: ApprovalRequest | None = None,
    ) -> ProposalRecord:
        state = decided_state(proposal_id, decision, approval)
        with self._writing() as db:
            row = db.execute(
                "SELECT body, state, version FROM proposals WHERE id = ?", (proposal_id,)
            ).fetchone()
            if row is None:
                raise NotFound(f"no proposal {proposal_id} in {self.path}")
            proposal = Proposal.model_validate_json(row[0])
            if row[1] != "open":
                raise Conflict(
                    f"proposal {proposal_id} is already {row[1]}; re-read it for its decision"
                )
            decided = proposal.model_copy(update={"state": state})
            changed = db.execute(
                "UPDATE proposals SET state = ?, version = version + 1, body = ?, decision = ? "
                "WHERE id = ? AND version = ? AND state = 'open'",
                (
                    state,
                    decided.model_dump_json(),
                    decision.model_dump_json(),
                    proposal_id,
                    version,
                ),
            ).rowcount
            if changed != 1:
                raise Conflict(
                    f"proposal {proposal_id} changed since version {version} was read "
                    f"(now {row[2]}); re-read it and decide again"
                )
            if decision.approves:
                self._approve(proposal)
            self._add_events(proposal_id, events)
            if approval is not None:
                sqlite_approvals.insert(db, approval)
            sqlite_audit.append(
                db, audit.decided(proposal_id, events, decision, approval), self._key
            )
        return self.get(proposal_id)

    def _add_events(self, proposal_id: str, events: Sequence[TranscriptEvent]) -> None:
        self._db.executemany(
            "INSERT INTO events (proposal, seq, body) VALUES (?, ?, ?)",
            [(proposal_id, event.seq, event.model_dump_json()) for event in events],
        )

    def _approve(self, proposal: Proposal) -> None:
        key = target_key(proposal.action.target)
        current = self._target(key)
        if current.version != proposal.basis:
            raise Conflict(
                f"{proposal.action.target} has been decided by proposal {current.proposal} "
                f"since proposal {proposal.id} was made; re-read and decide again"
            )
        if current.version == 0:
            self._db.execute(
                "INSERT INTO targets (target, version, proposal) VALUES (?, 1, ?)",
                (key, proposal.id),
            )
        else:
            self._db.execute(
                "UPDATE targets SET version = version + 1, proposal = ? "
                "WHERE target = ? AND version = ?",
                (proposal.id, key, current.version),
            )

    # --- approvals ----------------------------------------------------------------------------

    def approval(self, request_id: str) -> ApprovalRequest:
        request = sqlite_approvals.read(self._db, request_id)
        if request is None:
            raise NotFound(
                f"no approval request {request_id} in {self.path}; "
                f"`kubecrew approvals list` shows them"
            )
        return request

    def approvals(self, *, state: ApprovalState | None = None) -> builtins.list[ApprovalRequest]:
        return sqlite_approvals.listed(self._db, state)

    def answer(self, request_id: str, given: ApprovalAnswer, *, now: datetime) -> ApprovalRequest:
        with self._writing():
            request = self.approval(request_id)
            if request.ended:
                raise Conflict(ended_message(request))
            record = self._read(request.proposal)
            late = now > request.expires_at
            if late:
                settled = lapse(request, record, now=now)
            else:
                target = self._target(target_key(request.action.target))
                settled = settle(request, given, record, target, now=now)
            self._settle(record, settled)
        if late:  # the expiry is committed; the answer is refused
            raise Conflict(expired_message(request))
        return settled.request

    def expire(self, *, now: datetime) -> builtins.list[ApprovalRequest]:
        ended: builtins.list[ApprovalRequest] = []
        if not any(now > request.expires_at for request in self.approvals(state="pending")):
            return ended  # the common case for a polling waiter: no write lock taken
        with self._writing():
            for request in self.approvals(state="pending"):
                if now > request.expires_at:
                    record = self._read(request.proposal)
                    settled = lapse(request, record, now=now)
                    self._settle(record, settled)
                    ended.append(settled.request)
        return ended

    def claim(self, request_id: str, *, waiter: str) -> ApprovalRequest | None:
        with self._writing() as db:
            request = self.approval(request_id)  # read under the write lock: one claim wins
            if not request.ended:
                raise Conflict(
                    f"{request_id} is still pending: nothing to claim until it is answered"
                )
            if request.claimed_by is not None:
                return None
            claimed = request.model_copy(update={"claimed_by": waiter})
            sqlite_approvals.update(db, claimed)
        return claimed

    def _settle(self, record: ProposalRecord, settled: Settlement) -> None:
        """Write an answer's or expiry's outcome; inside the transaction that computed it."""
        sqlite_approvals.update(self._db, settled.request)
        if settled.decision is not None:
            proposal = record.proposal.model_copy(update={"state": "decided"})
            changed = self._db.execute(
                "UPDATE proposals SET state = 'decided', version = version + 1, body = ?, "
                "decision = ? WHERE id = ? AND state = 'escalated'",
                (proposal.model_dump_json(), settled.decision.model_dump_json(), proposal.id),
            ).rowcount
            if changed != 1:
                raise Conflict(f"proposal {proposal.id} is no longer escalated; re-read it")
            if settled.approves:
                self._approve(record.proposal)
        self._add_events(record.proposal.id, settled.events)
        sqlite_audit.append(self._db, settled.entries, self._key)

    # --- audit --------------------------------------------------------------------------------

    def use_approval(
        self, proposal_id: str, *, by: str, now: datetime, dry_run: bool = False
    ) -> Decision:
        with self._writing():
            taken = self._use(proposal_id, by=by, now=now, dry_run=dry_run)
        if isinstance(taken, str):  # the report is committed; the use is refused
            raise Tampered(taken)
        return taken

    def _use(self, proposal_id: str, *, by: str, now: datetime, dry_run: bool) -> Decision | str:
        """Inside the write: the decision, now used; or why it is forged, reported."""
        record = self._read(proposal_id)
        forged = "" if record.decision is None else self._attest(proposal_id, record.decision)
        if forged:
            report = audit.refused_use(proposal_id, forged, by=by, at=now)
            sqlite_audit.append(self._db, [report], self._key)
            return forged
        target = self._target(target_key(record.proposal.action.target))
        decision = unusable(record, target, sqlite_uses.read(self._db, proposal_id))
        if not dry_run:
            sqlite_uses.insert(self._db, proposal_id, Use(by=by, at=now))
            used = audit.used(proposal_id, decision, by=by, at=now)
            sqlite_audit.append(self._db, [used], self._key)
        return decision

    def _attest(self, proposal_id: str, decision: Decision) -> str:
        """`audit.attest` on the log from the proposal's last decision record to the head."""
        head, seal = sqlite_audit.sealed_head(self._db)
        first = sqlite_audit.last_decision(self._db, proposal_id)
        try:
            tail = (
                []
                if first is None
                else sqlite_audit.read(
                    self._db, after=first - 1, limit=None, subject=None, kind=None
                )
            )
        except ValidationError:  # a record's JSON no longer parses: the log was edited
            return (
                f"the decision of proposal {proposal_id} cannot be checked: a record after it "
                "is no longer an audit record; it is not used. `kubecrew audit verify` names it"
            )
        sealed = not audit.unsealed(head, seal, self._key)
        return audit.attest(proposal_id, decision, tail, head, sealed=sealed)

    def record(self, entries: Sequence[AuditEntry]) -> builtins.list[AuditRecord]:
        with self._writing() as db:
            return sqlite_audit.append(db, entries, self._key)

    def audit(
        self,
        *,
        after: int = 0,
        limit: int | None = None,
        subject: str | None = None,
        kind: AuditKind | None = None,
    ) -> builtins.list[AuditRecord]:
        return sqlite_audit.read(self._db, after=after, limit=limit, subject=subject, kind=kind)

    def audit_head(self) -> AuditHead:
        return sqlite_audit.head(self._db)

    def verify_audit(self) -> AuditReport:
        self._db.execute("BEGIN")  # one snapshot of the head, the records and the decisions
        try:
            head, seal = sqlite_audit.sealed_head(self._db)
            records, problems = sqlite_audit.stored(self._db)
            rows = self._db.execute(
                "SELECT id, decision FROM proposals WHERE decision IS NOT NULL"
            ).fetchall()
        finally:
            self._db.execute("COMMIT")
        stored, unreadable = {}, []
        for proposal_id, decision in rows:
            try:
                stored[proposal_id] = Decision.model_validate_json(decision)
            except ValidationError:
                unreadable.append(f"proposal {proposal_id}: its stored decision was edited")
        problems = (
            audit.verify(records, head)
            + problems
            + audit.unsealed(head, seal, self._key)
            + audit.decisions(stored, records)
            + unreadable
        )
        return AuditReport(head=head, records=len(records), problems=problems)

    def close(self) -> None:
        self._db.close()
