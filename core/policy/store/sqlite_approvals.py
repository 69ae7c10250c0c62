"""The SQLite store's approval requests table: rows in, rows out, nothing decided here.

Each request is stored whole as the JSON of `proposals.ApprovalRequest`, with its proposal,
state, request time and claim copied into columns to filter and order on. Writes run inside the
caller's BEGIN IMMEDIATE transaction, so a request is written with the decision that opens it
and its end with the proposal's final decision; what an answer does is `approvals.settle`'s.
"""

from __future__ import annotations

import sqlite3

from core.policy.proposals import ApprovalRequest, ApprovalState

SCHEMA = """
CREATE TABLE IF NOT EXISTS approvals (
    id TEXT PRIMARY KEY,
    proposal TEXT NOT NULL REFERENCES proposals(id),
    state TEXT NOT NULL,
    requested TEXT NOT NULL,
    claimed_by TEXT,
    body TEXT NOT NULL
);
"""


def read(db: sqlite3.Connection, request_id: str) -> ApprovalRequest | None:
    row = db.execute("SELECT body FROM approvals WHERE id = ?", (request_id,)).fetchone()
    return None if row is None else ApprovalRequest.model_validate_json(row[0])


def listed(db: sqlite3.Connection, state: ApprovalState | None) -> list[ApprovalRequest]:
    query = "SELECT body FROM approvals"
    rows = (
        db.execute(query + " WHERE state = ? ORDER BY requested, id", (state,))
        if state
        else db.execute(query + " ORDER BY requested, id")
    )
    return [ApprovalRequest.model_validate_json(body) for (body,) in rows.fetchall()]


def insert(db: sqlite3.Connection, request: ApprovalRequest) -> None:
    db.execute(
        "INSERT INTO approvals (id, proposal, state, requested, claimed_by, body) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (
            request.id,
            request.proposal,
            request.state,
            request.requested_at.isoformat(),
            request.claimed_by,
            request.model_dump_json(),
        ),
    )


def update(db: sqlite3.Connection, request: ApprovalRequest) -> None:
    db.execute(
        "UPDATE approvals SET state = ?, claimed_by = ?, body = ? WHERE id = ?",
        (request.state, request.claimed_by, request.model_dump_json(), request.id),
    )
