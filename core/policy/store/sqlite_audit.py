"""The SQLite store's audit log: the records table, its sealed head row, appending inside a write.

Only SQL lives here; what a record says and how records chain is `policy.audit`. `append` runs
inside the caller's BEGIN IMMEDIATE transaction, so a write and its records commit together and
the head row (seq and hash of the last record, kept apart so cutting records off the end is
found) moves with them, sealed with the store's key (`audit.seal`). Each record is stored whole
as JSON, its seq, kind and subject copied into columns to filter on. Lookups trust the columns,
so `stored` checks them: each column must equal the field it copies, and the JSON must be exactly
what the store writes, so an edit to a column or to the JSON's bytes shows in `audit verify`
even where the hashed fields still match.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from pydantic import ValidationError

from core.policy import audit
from core.policy.audit import AuditEntry, AuditHead, AuditKind, AuditRecord, chain

SCHEMA = """
CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    subject TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_subject ON audit (subject, seq);
CREATE TABLE IF NOT EXISTS audit_head (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    seq INTEGER NOT NULL,
    hash TEXT NOT NULL,
    seal TEXT NOT NULL DEFAULT ''
);
"""


def upgrade(db: sqlite3.Connection) -> None:
    """Add the head's seal column to a store from before heads were sealed."""
    columns = {row[1] for row in db.execute("PRAGMA table_info(audit_head)")}
    if "seal" not in columns:
        db.execute("ALTER TABLE audit_head ADD COLUMN seal TEXT NOT NULL DEFAULT ''")


def head(db: sqlite3.Connection) -> AuditHead:
    return sealed_head(db)[0]


def sealed_head(db: sqlite3.Connection) -> tuple[AuditHead, str]:
    """The head and its stored seal ("" for a store that never sealed it)."""
    row = db.execute("SELECT seq, hash, seal FROM audit_head WHERE id = 1").fetchone()
    return (AuditHead(), "") if row is None else (AuditHead(seq=row[0], hash=row[1]), row[2])


def start(db: sqlite3.Connection, key: bytes) -> None:
    """Write the sealed empty head of a new log, so deleting every record and the head shows."""
    db.execute(
        "INSERT INTO audit_head (id, seq, hash, seal) SELECT 1, 0, ?, ? "
        "WHERE NOT EXISTS (SELECT 1 FROM audit_head) AND NOT EXISTS (SELECT 1 FROM audit)",
        (audit.GENESIS, audit.seal(key, AuditHead())),
    )


def append(db: sqlite3.Connection, entries: Sequence[AuditEntry], key: bytes) -> list[AuditRecord]:
    """Chain `entries` after the head and store them; call inside a write transaction."""
    records = chain(head(db), entries)
    if not records:
        return records
    db.executemany(
        "INSERT INTO audit (seq, kind, subject, body) VALUES (?, ?, ?, ?)",
        [(r.seq, r.kind, r.subject, r.model_dump_json()) for r in records],
    )
    last = AuditHead(seq=records[-1].seq, hash=records[-1].hash)
    db.execute(
        "INSERT INTO audit_head (id, seq, hash, seal) VALUES (1, ?, ?, ?) ON CONFLICT (id) "
        "DO UPDATE SET seq = excluded.seq, hash = excluded.hash, seal = excluded.seal",
        (last.seq, last.hash, audit.seal(key, last)),
    )
    return records


def read(
    db: sqlite3.Connection,
    *,
    after: int,
    limit: int | None,
    subject: str | None,
    kind: AuditKind | None,
) -> list[AuditRecord]:
    query = "SELECT body FROM audit WHERE seq > ?"
    parameters: list[object] = [after]
    if subject is not None:
        query += " AND subject = ?"
        parameters.append(subject)
    if kind is not None:
        query += " AND kind = ?"
        parameters.append(kind)
    query += " ORDER BY seq" + (" LIMIT ?" if limit is not None else "")
    if limit is not None:
        parameters.append(limit)
    rows = db.execute(query, parameters).fetchall()
    return [AuditRecord.model_validate_json(body) for (body,) in rows]


def last_decision(db: sqlite3.Connection, proposal_id: str) -> int | None:
    """The seq of the proposal's last "decision" record, as the columns say."""
    row = db.execute(
        "SELECT max(seq) FROM audit WHERE subject = ? AND kind = 'decision'", (proposal_id,)
    ).fetchone()
    return None if row is None or row[0] is None else int(row[0])


def stored(db: sqlite3.Connection) -> tuple[list[AuditRecord], list[str]]:
    """Every record that parses, and what is wrong with how records are stored."""
    records: list[AuditRecord] = []
    problems: list[str] = []
    for seq, kind, subject, body in db.execute(
        "SELECT seq, kind, subject, body FROM audit ORDER BY seq"
    ):
        try:
            record = AuditRecord.model_validate_json(body)
        except ValidationError:
            problems.append(f"record {seq}'s stored JSON is no longer an audit record: edited")
            continue
        records.append(record)
        if (seq, kind, subject) != (record.seq, record.kind, record.subject):
            problems.append(
                f"record {record.seq} ({record.kind} {record.subject}) is filed under seq {seq}, "
                f"kind {kind}, subject {subject}: its columns were edited"
            )
        elif body != record.model_dump_json():
            problems.append(
                f"record {seq} ({kind} {subject}) is not stored as the store wrote it: its JSON "
                f"was edited (whitespace or form) though its hashed fields still match"
            )
    return records, problems
