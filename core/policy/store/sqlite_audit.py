"""The SQLite store's audit log: the records table, its head row, and appending inside a write.

Only SQL lives here; what a record says and how records chain is `policy.audit`. `append` runs
inside the caller's BEGIN IMMEDIATE transaction, so a write and its records commit together and
the head row (seq and hash of the last record, kept apart so cutting records off the end is
found) moves with them. Each record is stored whole as JSON, its seq, kind and subject copied
into columns to filter on; `verify` reads the JSON, so an edit to it breaks the chain.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

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
    hash TEXT NOT NULL
);
"""


def head(db: sqlite3.Connection) -> AuditHead:
    row = db.execute("SELECT seq, hash FROM audit_head WHERE id = 1").fetchone()
    return AuditHead() if row is None else AuditHead(seq=row[0], hash=row[1])


def append(db: sqlite3.Connection, entries: Sequence[AuditEntry]) -> list[AuditRecord]:
    """Chain `entries` after the head and store them; call inside a write transaction."""
    records = chain(head(db), entries)
    if not records:
        return records
    db.executemany(
        "INSERT INTO audit (seq, kind, subject, body) VALUES (?, ?, ?, ?)",
        [(r.seq, r.kind, r.subject, r.model_dump_json()) for r in records],
    )
    last = records[-1]
    db.execute(
        "INSERT INTO audit_head (id, seq, hash) VALUES (1, ?, ?) "
        "ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash",
        (last.seq, last.hash),
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
