"""Which Slack message shows which approval request, kept in a small SQLite file of its own.

The policy store knows requests, not Slack: this ledger maps a request id to the message that
shows it (channel, ts) and to what that message last showed (the request's state and how many
answers it had), so a restarted app neither posts a request twice nor forgets to update a message
when the request ends while it was down. It lives next to the SQLite store (or under the
kubecrew home for the Kubernetes store), or with `$KUBECREW_DATABASE_URL` in the schema `slack`
of that PostgreSQL database, which the replicas of the crew share (`open_ledger` chooses,
`agents.runtime.persistence`); it belongs to the Slack app alone. The statements are the same
for both databases; SQLite's implicit rowid, the order of insertion, is a column on PostgreSQL.

A message is recorded right after Slack accepted it; a crash between the two would post that one
request again on restart, which is the better failure than a request nobody is shown.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agents.runtime.persistence import Dialect, Sql, SqliteFile, open_sql
from core.errors import Unavailable
from core.policy.store import KUBERNETES, SPEC_ENV
from core.policy.store.sqlite import default_path

_COLUMNS = """
    request TEXT PRIMARY KEY,
    channel TEXT NOT NULL,
    ts TEXT NOT NULL,
    state TEXT NOT NULL,
    answers INTEGER NOT NULL"""
_TABLE: dict[Dialect, str] = {
    "sqlite": f"CREATE TABLE IF NOT EXISTS posts ({_COLUMNS}\n)",
    "postgres": f"CREATE TABLE IF NOT EXISTS posts ({_COLUMNS},\n    rowid BIGSERIAL\n)",
}
FILE_NAME = "slack-posts.sqlite"
SCHEMA = "slack"  # the ledger's in $KUBECREW_DATABASE_URL's database


@dataclass(frozen=True)
class Post:
    request: str
    channel: str
    ts: str  # Slack's id of the message within its channel
    state: str  # the request's state the message shows
    answers: int  # how many answers the message shows


def ledger_path(store: str | None, environ: Mapping[str, str] = os.environ) -> Path:
    """Beside the SQLite store file; under the kubecrew home for the Kubernetes store."""
    spec = store or environ.get(SPEC_ENV)
    if spec is not None and (spec == KUBERNETES or spec.startswith(KUBERNETES + ":")):
        return default_path(environ).parent / FILE_NAME
    store_file = Path(spec).expanduser() if spec else default_path(environ)
    return store_file.parent / FILE_NAME


def open_ledger(path: Path, environ: Mapping[str, str] = os.environ) -> Ledger:
    """The ledger in `$KUBECREW_DATABASE_URL`'s database when it is set, else the SQLite file
    `path` (`ledger_path`'s)."""
    return Ledger(open_sql(path, schema=SCHEMA, timeout=30, environ=environ))


class Ledger:
    """One connection per thread that uses it: open it where you use it, and close it. A path
    is the SQLite file."""

    def __init__(self, ledger: Path | Sql) -> None:
        try:
            self._db = SqliteFile(ledger, timeout=30) if isinstance(ledger, Path) else ledger
            if self._db.dialect == "sqlite":
                self._db.execute("PRAGMA journal_mode=WAL")
            with self._db.transaction():  # two replicas starting at once make it once
                self._db.execute(_TABLE[self._db.dialect])
        except sqlite3.Error as exc:
            raise Unavailable(
                f"cannot open the Slack message ledger {self._db.where}: {exc}"
            ) from exc

    def get(self, request: str) -> Post | None:
        row = self._db.execute(
            "SELECT request, channel, ts, state, answers FROM posts WHERE request = ?", (request,)
        ).fetchone()
        return None if row is None else Post(*row)

    def showing(self, state: str) -> list[Post]:
        """The messages that last showed a request in `state`."""
        rows = self._db.execute(
            "SELECT request, channel, ts, state, answers FROM posts WHERE state = ? ORDER BY rowid",
            (state,),
        )
        return [Post(*row) for row in rows.fetchall()]

    def posted(self, post: Post) -> None:
        self._db.execute(
            "INSERT INTO posts (request, channel, ts, state, answers) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (request) DO UPDATE SET channel = excluded.channel, ts = excluded.ts, "
            "state = excluded.state, answers = excluded.answers",
            (post.request, post.channel, post.ts, post.state, post.answers),
        )

    def shown(self, request: str, *, state: str, answers: int) -> None:
        self._db.execute(
            "UPDATE posts SET state = ?, answers = ? WHERE request = ?", (state, answers, request)
        )

    def close(self) -> None:
        self._db.close()
