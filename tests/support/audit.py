"""What a SQLite policy store audited of the writes it gated: `mutation_records` as stored,
`mutations` as (subject, summary, result) rows a test compares whole."""

from __future__ import annotations

from pathlib import Path

from core.policy.audit import AuditRecord
from core.policy.store.sqlite import SqliteStore


def mutations(store: Path) -> list[tuple[str, str, str]]:
    return [(r.subject, r.summary, r.result) for r in mutation_records(store)]


def mutation_records(store: Path) -> list[AuditRecord]:
    opened = SqliteStore(store)
    try:
        return opened.audit(kind="mutation")
    finally:
        opened.close()
