"""The Slack app's ledger in PostgreSQL (`$KUBECREW_DATABASE_URL`): what one replica posted,
another finds, so neither posts a request twice; a message shown again keeps its place; and
without the variable the ledger is the SQLite file, as before."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

import pytest

from agents.runtime.persistence import DATABASE_ENV
from kubecrew.channels.slack.ledger import Post, open_ledger
from tests.support.postgres import fresh_database


@pytest.fixture
def url(request: pytest.FixtureRequest) -> str:
    return fresh_database(request.config)


def test_what_one_replica_posted_another_finds(url: str, tmp_path: Path) -> None:
    path, shared = tmp_path / "slack-posts.sqlite", {DATABASE_ENV: url}
    with closing(open_ledger(path, shared)) as one, closing(open_ledger(path, shared)) as two:
        one.posted(Post("a-1", "C1", "100.1", "pending", 0))
        one.posted(Post("a-2", "C1", "100.2", "pending", 0))
        assert two.get("a-1") == Post("a-1", "C1", "100.1", "pending", 0)

        two.shown("a-1", state="granted", answers=1)
        one.posted(Post("a-3", "C2", "100.3", "pending", 0))
        one.posted(Post("a-2", "C1", "100.2", "pending", 1))  # shown again: still second

        assert one.get("a-1") == Post("a-1", "C1", "100.1", "granted", 1)
        assert [p.request for p in two.showing("pending")] == ["a-2", "a-3"]
        assert two.get("a-2") == Post("a-2", "C1", "100.2", "pending", 1)
        assert one.get("a-9") is None
    assert not path.exists()


def test_without_a_database_the_ledger_is_the_file(tmp_path: Path) -> None:
    path = tmp_path / "slack-posts.sqlite"
    with closing(open_ledger(path, {})) as ledger:
        ledger.posted(Post("a-1", "C1", "100.1", "pending", 0))
    with closing(open_ledger(path, {})) as ledger:
        assert [p.request for p in ledger.showing("pending")] == ["a-1"]
    assert path.is_file()
