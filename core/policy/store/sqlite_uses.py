"""The SQLite store's uses table: which approved proposal a write has taken up, and who.

One row per used proposal, its primary key the proposal's id, inserted by `use_approval` in the
same BEGIN IMMEDIATE transaction that checks it is free, so of any number of concurrent writers
(threads or processes) one inserts it and every other one sees it. Nothing deletes a row: a use
whose write failed stays spent (`store.base`).
"""

from __future__ import annotations

import sqlite3
from datetime import datetime

from core.policy.store.base import Use

SCHEMA = """
CREATE TABLE IF NOT EXISTS uses (
    proposal TEXT PRIMARY KEY REFERENCES proposals(id),
    used_by TEXT NOT NULL,
    used_at TEXT NOT NULL
);
"""


def read(db: sqlite3.Connection, proposal_id: str) -> Use | None:
    row = db.execute(
        "SELECT used_by, used_at FROM uses WHERE proposal = ?", (proposal_id,)
    ).fetchone()
    return None if row is None else Use(by=row[0], at=datetime.fromisoformat(row[1]))


def insert(db: sqlite3.Connection, proposal_id: str, use: Use) -> None:
    db.execute(
        "INSERT INTO uses (proposal, used_by, used_at) VALUES (?, ?, ?)",
        (proposal_id, use.by, use.at.isoformat()),
    )
