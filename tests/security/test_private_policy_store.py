"""Finding 12 (policy store): the SQLite policy store and its audit key are their owner's alone.

The store holds every proposal, decision and answer, and the key beside it seals the audit
log's head; the store file was created 0644 (the umask's say). Both are created 0600 whatever
the umask, and a store or key this user owns that an earlier version (or a copy) left wider is
narrowed to 0600 when the store opens it, with SQLite's -wal and -shm files alike.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.policy.store.sqlite import SqliteStore
from tests.support.policies import downscale


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def files(directory: Path) -> dict[str, int]:
    return {p.name: mode(p) for p in directory.iterdir() if p.is_file()}


@pytest.fixture
def usual_umask() -> Iterator[None]:
    """The umask most machines start with, under which new files are world-readable."""
    before = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(before)


@pytest.mark.usefixtures("usual_umask")
def test_a_new_store_and_its_key_are_created_0600(tmp_path: Path) -> None:
    path = tmp_path / "home" / "policy" / "store.sqlite"
    store = SqliteStore(path)
    store.propose(downscale())  # the WAL and its index exist while the store is open
    written = files(path.parent)
    store.close()

    assert {"store.sqlite", "store.sqlite.key", "store.sqlite-wal"} <= set(written)
    assert written == {name: 0o600 for name in written}
    assert mode(path.parent) == 0o700  # the folder the store made for itself


@pytest.mark.usefixtures("usual_umask")
def test_a_wider_store_and_key_are_narrowed_when_opened(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    SqliteStore(path).close()  # made, with its key
    with sqlite3.connect(path) as db:  # as an earlier version or a copy left it: wide open
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE IF NOT EXISTS scratch (x)")
    db.close()
    for each in tmp_path.iterdir():
        each.chmod(0o644)
    assert set(files(tmp_path).values()) == {0o644}

    store = SqliteStore(path)
    store.propose(downscale())
    written = files(tmp_path)
    store.close()

    assert "store.sqlite.key" in written
    assert written == {name: 0o600 for name in written}
