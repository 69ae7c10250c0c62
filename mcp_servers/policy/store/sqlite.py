"""The embedded policy store: one SQLite file, shared safely by several local processes.

WAL mode lets readers run while one process writes; every write is one `BEGIN IMMEDIATE`
transaction, so a decision's evaluations, its decision and the target's approval version land
together or not at all (a crash in the middle leaves the proposal open, never half decided).
The rules of `store.base` are enforced here in SQL: the decision is a conditional UPDATE on the
proposal's version and state, and an approval a conditional UPDATE on the target's version.
Records are stored as the JSON of their pydantic models, so every backend holds the same text.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from mcp_servers.common.errors import Conflict, NotFound, Unavailable
from mcp_servers.policy.actions import TargetRef
from mcp_servers.policy.proposals import (
    Decision,
    Proposal,
    ProposalRecord,
    ProposalState,
    TranscriptEvent,
)
from mcp_servers.policy.store.base import TargetState, target_key

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
_APPROVED = ("approved", "approved-as-countered")


def default_path(environ: Mapping[str, str] = os.environ) -> Path:
    """The store under the kubecrew home ($KUBECREW_HOME, else ~/.kubecrew), as tokens are."""
    base = environ.get("KUBECREW_HOME")
    root = Path(base).expanduser() if base else Path.home() / ".kubecrew"
    return root / "policy" / "store.sqlite"


class SqliteStore:
    def __init__(self, path: Path, *, timeout: float = 30.0) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            # Autocommit mode: transactions are the explicit BEGIN IMMEDIATE blocks below.
            self._db = sqlite3.connect(path, timeout=timeout, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.executescript(_SCHEMA)
        except sqlite3.Error as exc:
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
            event = TranscriptEvent(
                seq=0,
                at=proposal.created,
                kind="proposed",
                actor=str(proposal.proposer),
                note=f"proposes {proposal.action.describe()}: {proposal.rationale}",
            )
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
        return ProposalRecord(proposal=stored, version=1, transcript=[event])

    def get(self, proposal_id: str) -> ProposalRecord:
        # One read transaction, so the row and its transcript are one snapshot.
        self._db.execute("BEGIN")
        try:
            row = self._db.execute(
                "SELECT body, version, decision FROM proposals WHERE id = ?", (proposal_id,)
            ).fetchone()
            events = self._db.execute(
                "SELECT body FROM events WHERE proposal = ? ORDER BY seq", (proposal_id,)
            ).fetchall()
        finally:
            self._db.execute("COMMIT")
        if row is None:
            raise NotFound(
                f"no proposal {proposal_id} in {self.path}; `kubecrew proposals list` shows them"
            )
        body, version, decision = row
        return ProposalRecord(
            proposal=Proposal.model_validate_json(body),
            version=version,
            transcript=[TranscriptEvent.model_validate_json(e) for (e,) in events],
            decision=None if decision is None else Decision.model_validate_json(decision),
        )

    def list(self, *, state: ProposalState | None = None) -> list[Proposal]:
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
    ) -> ProposalRecord:
        state: ProposalState = "escalated" if decision.outcome == "escalated" else "decided"
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
            if decision.outcome in _APPROVED:
                self._approve(proposal)
            db.executemany(
                "INSERT INTO events (proposal, seq, body) VALUES (?, ?, ?)",
                [(proposal_id, event.seq, event.model_dump_json()) for event in events],
            )
        return self.get(proposal_id)

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

    def close(self) -> None:
        self._db.close()
