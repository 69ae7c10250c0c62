"""Which Slack message shows which approval request, kept in a small SQLite file of its own.

The policy store knows requests, not Slack: this ledger maps a request id to the message that
shows it (channel, ts) and to what that message last showed (the request's state and how many
answers it had), so a restarted app neither posts a request twice nor forgets to update a message
when the request ends while it was down. It lives next to the SQLite store (or under the
kubecrew home for the Kubernetes store) and belongs to the Slack app alone.

A message is recorded right after Slack accepted it; a crash between the two would post that one
request again on restart, which is the better failure than a request nobody is shown.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from core.errors import Unavailable
from core.policy.store import KUBERNETES, SPEC_ENV
from core.policy.store.sqlite import default_path

_SCHEMA = """
CREATE TABLE IF NOT EXISTS posts (
    request TEXT PRIMARY KEY,
    channel TEXT NOT NULL,
    ts TEXT NOT NULL,
    state TEXT NOT NULL,
    answers INTEGER NOT NULL
);
"""
FILE_NAME = "slack-posts.sqlite"


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


class Ledger:
    """One connection per thread that uses it: open it where you use it, and close it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(path, timeout=30, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.executescript(_SCHEMA)
        except sqlite3.Error as exc:
            raise Unavailable(f"cannot open the Slack message ledger {path}: {exc}") from exc

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
        return [Post(*row) for row in rows]

    def posted(self, post: Post) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO posts (request, channel, ts, state, answers) "
            "VALUES (?, ?, ?, ?, ?)",
            (post.request, post.channel, post.ts, post.state, post.answers),
        )

    def shown(self, request: str, *, state: str, answers: int) -> None:
        self._db.execute(
            "UPDATE posts SET state = ?, answers = ? WHERE request = ?", (state, answers, request)
        )

    def close(self) -> None:
        self._db.close()
