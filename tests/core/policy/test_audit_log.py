"""The audit log: what the downscale negotiation records, and that tampering with the file shows.

The issue's scenario runs through the SQLite store; its records are read back (kinds, actors,
the CapacityPolicy citation, results). Then the file is edited behind the store's back with
sqlite3, as someone covering their tracks would: a changed field, a deleted middle record, a
deleted last record. `verify` and `kubecrew audit verify` must name each.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from core.policy import audit
from core.policy.audit import AuditEntry
from core.policy.negotiation import negotiate
from core.policy.store.sqlite import SqliteStore
from tests.support.policies import NOON, defaults, downscale

KUBECREW = str(Path(sys.executable).parent / "kubecrew")
MIN_REPLICAS = "CapacityPolicy shop-min-capacity / rule min-replicas"
FRACTION = "ChangePolicy shop-changes / rule max-replica-change-fraction"


@pytest.fixture
def logged(tmp_path: Path) -> tuple[Path, str]:
    """A store holding the negotiated downscale and the mutation the operator then applied."""
    path = tmp_path / "store.sqlite"
    store = SqliteStore(path)
    proposal = downscale()
    store.propose(proposal)
    negotiate(store, defaults(), proposal.id, now=NOON)
    applied = AuditEntry(
        at=NOON,
        actor="agent cluster-operator",
        kind="mutation",
        subject=proposal.id,
        summary="scaled Deployment shop/web to 3 replicas",
        result="applied",
    )
    (record,) = store.record([applied])
    assert record.seq == 6
    store.close()
    return path, proposal.id


def test_the_downscale_is_recorded_with_who_why_and_the_result(logged: tuple[Path, str]) -> None:
    path, proposal_id = logged
    store = SqliteStore(path)
    records = store.audit()
    assert [(r.seq, r.kind, r.actor, r.result) for r in records] == [
        (1, "proposal", "agent cluster-operator", "open"),
        (2, "evaluation", "agent dev-team", "counter"),
        (3, "evaluation", "agent cluster-operator", "accept"),
        (4, "evaluation", "agent dev-team", "accept"),
        (5, "decision", "agent policy-store", "approved-as-countered"),
        (6, "mutation", "agent cluster-operator", "applied"),
    ]
    assert {r.subject for r in records} == {proposal_id}
    assert MIN_REPLICAS in records[1].citations and MIN_REPLICAS in records[4].citations
    assert records[4].summary.startswith("approved as countered (3)")
    assert audit.verify(records, store.audit_head()) == []
    assert store.audit_head().hash == records[-1].hash
    assert [r.seq for r in store.audit(kind="evaluation", after=2, limit=1)] == [3]
    assert store.audit(subject="p-other") == []
    store.close()


def tamper(path: Path, statement: str) -> None:
    with sqlite3.connect(path) as db:
        assert db.execute(statement).rowcount == 1
    db.close()


def problems(path: Path) -> list[str]:
    store = SqliteStore(path)
    try:
        return audit.verify(store.audit(), store.audit_head())
    finally:
        store.close()


def test_a_modified_record_is_named(logged: tuple[Path, str]) -> None:
    path, proposal_id = logged
    tamper(
        path,
        "UPDATE audit SET body = json_set(body, '$.result', 'reject') WHERE seq = 2",
    )
    assert problems(path) == [
        f"record 2 (evaluation {proposal_id}) was modified: its fields no longer match its hash"
    ]


def test_a_deleted_middle_record_is_named(logged: tuple[Path, str]) -> None:
    path, _ = logged
    tamper(path, "DELETE FROM audit WHERE seq = 3")
    found = problems(path)
    assert found[0] == "record 3 is missing (deleted?) before record 4"
    assert found[1].startswith("record 4 does not follow the record before it")


def test_a_deleted_last_record_is_named_through_the_head(logged: tuple[Path, str]) -> None:
    path, _ = logged
    tamper(path, "DELETE FROM audit WHERE seq = 6")
    assert problems(path) == [
        "record 6 is missing from the end (deleted?): the head says 6 records were written"
    ]


def kubecrew(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KUBECREW, "audit", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "KUBECREW_DEBUG": ""},
    )


def test_kubecrew_audit_verify_exits_1_listing_every_problem(logged: tuple[Path, str]) -> None:
    path, proposal_id = logged
    intact = kubecrew("verify", "--store", str(path))
    assert intact.returncode == 0, intact.stderr
    head = SqliteStore(path)
    assert intact.stdout.strip() == f"intact: 6 records, head {head.audit_head().hash[:12]}"
    head.close()
    listed = kubecrew("list", "--store", str(path), "--kind", "evaluation", "--limit", "1")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith(f"    2  2026-12-02 11:00:00  evaluation  {proposal_id}  ")
    assert listed.stdout.rstrip().endswith(
        "agent dev-team: round 1: shop counters with scale Deployment shop/web 5 -> 3 replicas "
        f"directly -> counter; cites {MIN_REPLICAS}; cites {FRACTION}"
    )
    tamper(path, "UPDATE audit SET body = json_set(body, '$.actor', 'person eve') WHERE seq = 5")
    tamper(path, "DELETE FROM audit WHERE seq = 6")
    broken = kubecrew("verify", "--store", str(path))
    assert broken.returncode == 1 and "Traceback" not in broken.stderr
    assert broken.stdout.splitlines() == [
        f"record 5 (decision {proposal_id}) was modified: its fields no longer match its hash",
        "record 6 is missing from the end (deleted?): the head says 6 records were written",
    ]
    assert "the audit log is not intact: 2 problem(s) above" in broken.stderr


def test_a_store_file_from_before_the_audit_log_opens_and_starts_one(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript(
            "CREATE TABLE proposals (id TEXT PRIMARY KEY, target TEXT NOT NULL, "
            "state TEXT NOT NULL, version INTEGER NOT NULL, created TEXT NOT NULL, "
            "body TEXT NOT NULL, decision TEXT);"
        )
    db.close()
    store = SqliteStore(path)
    store.propose(downscale())
    assert [r.kind for r in store.audit()] == ["proposal"]
    assert store.approvals() == []
    store.close()


def entry(summary: str) -> AuditEntry:
    return AuditEntry(
        at=NOON, actor="agent cluster-operator", kind="mutation", subject="x", summary=summary
    )


def test_records_appended_after_the_head_was_read_are_not_called_a_change() -> None:
    first = audit.chain(audit.AuditHead(), [entry("one"), entry("two")])
    head = audit.AuditHead(seq=first[-1].seq, hash=first[-1].hash)  # read before the append
    later = audit.chain(head, [entry("three")])
    assert audit.verify([*first, *later], head) == []
    forged = audit.AuditHead(seq=2, hash="f" * 64)
    assert audit.verify([*first, *later], forged) == [
        f"the last record is 3 ({later[0].hash[:12]}) but the head says 2 (ffffffffffff): "
        "the head or the tail was changed"
    ]


def test_the_hash_format_is_stable_and_covers_details() -> None:
    """Logs already written must keep verifying: this hash was computed before `details` existed."""
    applied = AuditEntry(
        at=NOON,
        actor="agent cluster-operator",
        kind="mutation",
        subject="Deployment shop/web",
        summary="scale: scale Deployment shop/web 5 -> 3 replicas directly",
        citations=["CapacityPolicy shop-min-capacity / rule min-replicas"],
        result="applied",
    )
    (record,) = audit.chain(audit.AuditHead(), [applied])
    assert record.hash == "9e6877589013db58ddee7e212c2a193b884426bc0f40a6803178a53c108ab3ad"
    changed = record.model_copy(update={"details": {"proposal": "p-1a2b3c4d"}})
    assert changed.expected_hash() != record.hash
