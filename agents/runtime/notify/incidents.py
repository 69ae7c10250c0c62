"""The incident store: one row per fingerprint, durable, so duplicates stay one incident.

A small SQLite file in the watched cluster's state (`core.home`: `agents/incidents.sqlite`),
or with `$KUBECREW_DATABASE_URL` the schema `incidents` of that PostgreSQL database, which
every replica of the crew shares (`open_incidents` chooses, `agents.runtime.persistence`),
keeps each incident's first and last sighting, how many signals it merged, how often it was
opened, and its state:

    open -> handling -> open (handled, still failing) | resolved -> open (it came back)
                     -> waiting (its heal stopped for a person's approval) -> handling (resumed)

A waiting incident remembers what it waits for (`Wait`: the approval request, the loop's thread,
who may answer) in a table beside it; `take_up` moves it back to handling in one statement, so
however many patrol passes (or watchers) see the request answered, one resumes the heal.

A heal in progress remembers its thread and process (`Run`, in a table of its own) from its
start to its end, so a heal killed halfway (between the merge and the sync, say) leaves its
incident `handling` with a run whose process is gone: `kubecrew status` lists it as
interrupted, and the next `kubecrew heal` of the same target continues that thread (the loop's
mutations are idempotent by key) instead of starting a second heal over the first's leftovers.

`record` is the one place that decides whether a signal is news: a fingerprint never seen, or
one that was resolved, opens an incident (and the caller runs its handler); anything else only
counts. Each decision, like each booking of a run (`begin`, `end`, `disown`) and each move of a
waiting incident (`wait`, `take_up`), is one transaction that lets one writer in at a time
(`Sql.transaction`: `BEGIN IMMEDIATE` on the file, the schema's lock on PostgreSQL), so a
watcher restarted mid-burst, or two watchers on one book, cannot open the same incident twice
nor book two runs of one incident. The statements are the same for both databases.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

from agents.runtime.notify.signals import Signal, Source
from agents.runtime.persistence import Sql, SqliteFile, open_sql
from core.home import state_home

State = Literal["open", "handling", "waiting", "resolved"]

# The host of a run its owner can no longer be working on: a replica that holds the crew's Lease
# knows every other replica has stopped (`kubecrew.leader`), wherever it ran.
DISOWNED = ""
SCHEMA = "incidents"  # the book's in $KUBECREW_DATABASE_URL's database

_SCHEMA = """
CREATE TABLE IF NOT EXISTS incidents (
    fingerprint TEXT PRIMARY KEY,
    kind TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL, finding TEXT NOT NULL,
    summary TEXT NOT NULL, source TEXT NOT NULL, state TEXT NOT NULL,
    first_seen DOUBLE PRECISION NOT NULL, last_seen DOUBLE PRECISION NOT NULL,
    count INTEGER NOT NULL, opened INTEGER NOT NULL
)
"""
_WAITS = """
CREATE TABLE IF NOT EXISTS waits (
    fingerprint TEXT PRIMARY KEY, request TEXT NOT NULL, thread TEXT NOT NULL,
    asked TEXT NOT NULL, since DOUBLE PRECISION NOT NULL
)
"""
_RUNS = """
CREATE TABLE IF NOT EXISTS runs (
    fingerprint TEXT PRIMARY KEY, thread TEXT NOT NULL, pid INTEGER NOT NULL,
    host TEXT NOT NULL, since DOUBLE PRECISION NOT NULL
)
"""
_COLUMNS = (
    "fingerprint, kind, namespace, name, finding, summary, source, state, first_seen, "
    "last_seen, count, opened"
)


@dataclass(frozen=True)
class Incident:
    fingerprint: str
    kind: str
    namespace: str
    name: str
    finding: str
    summary: str  # the latest signal's words
    source: Source  # who opened it last
    state: State
    first_seen: float  # epoch seconds
    last_seen: float
    count: int  # signals merged into it, over all its openings
    opened: int  # 1, or more once it came back after being resolved

    @property
    def subject(self) -> str:
        where = f" in {self.namespace}" if self.namespace else ""
        return f"{self.finding} on {self.kind} {self.name}{where}"


@dataclass(frozen=True)
class Wait:
    """What a waiting incident's heal waits for."""

    fingerprint: str
    request: str  # the approval request id (a-...)
    thread: str  # the remediation loop's thread, resumed once the request has ended
    asked: str  # who may answer it, by when, and how
    since: float  # epoch seconds


@dataclass(frozen=True)
class Run:
    """A heal that started and has not ended: alive, or interrupted (its process is gone)."""

    fingerprint: str
    thread: str
    pid: int
    host: str
    since: float  # epoch seconds

    @property
    def interrupted(self) -> bool:
        """Its process is gone (on this machine), or it was disowned by the Lease's holder; a
        run on another machine counts as alive."""
        if self.host == DISOWNED:
            return True
        if self.host != socket.gethostname():
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False


def default_path(environ: Mapping[str, str] = os.environ) -> Path:
    """The incident book in the state of the cluster being watched (`core.home`)."""
    return state_home(environ) / "agents" / "incidents.sqlite"


def open_incidents(path: Path | None = None, environ: Mapping[str, str] = os.environ) -> Incidents:
    """The cluster's incident book: in `$KUBECREW_DATABASE_URL`'s database when it is set (the
    replicas of the crew share it), else in the SQLite file `path` (`default_path`'s)."""
    return Incidents(open_sql(path or default_path(environ), schema=SCHEMA, environ=environ))


class Incidents:
    """The book on `Sql` (a file, or a schema of a database); a path is the SQLite file."""

    def __init__(self, book: Path | Sql) -> None:
        self._db = SqliteFile(book) if isinstance(book, Path) else book
        try:
            with self._db.transaction():  # two replicas starting at once make the tables once
                for table in (_SCHEMA, _WAITS, _RUNS):
                    self._db.execute(table)
        except BaseException:
            self._db.close()
            raise

    def close(self) -> None:
        self._db.close()

    def record(self, signal: Signal, *, now: float | None = None) -> tuple[Incident, bool]:
        """The incident `signal` belongs to, after counting it, and whether it is news (new,
        or back after being resolved): the caller handles news, and only news."""
        at = time.time() if now is None else now
        with self._db.transaction():
            row = self._db.execute(
                "SELECT state FROM incidents WHERE fingerprint = ?", (signal.fingerprint,)
            ).fetchone()
            news = row is None or row[0] == "resolved"
            if row is None:
                self._db.execute(
                    f"INSERT INTO incidents ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,'open',?,?,1,1)",
                    (signal.fingerprint, signal.kind, signal.namespace, signal.name,
                     signal.finding, signal.summary, signal.source, at, at),
                )  # fmt: skip
            else:
                self._db.execute(
                    "UPDATE incidents SET count = count + 1, last_seen = ?, summary = ?, "
                    "finding = ?, "
                    "state = CASE WHEN state = 'resolved' THEN 'open' ELSE state END, "
                    "opened = opened + CASE WHEN state = 'resolved' THEN 1 ELSE 0 END, "
                    "source = CASE WHEN state = 'resolved' THEN ? ELSE source END "
                    "WHERE fingerprint = ?",
                    (at, signal.summary, signal.finding, signal.source, signal.fingerprint),
                )
        incident = self.get(signal.fingerprint)
        assert incident is not None  # just written, in this connection
        return incident, news

    def set_state(self, fingerprint: str, state: State) -> None:
        self._db.execute(
            "UPDATE incidents SET state = ? WHERE fingerprint = ?", (state, fingerprint)
        )

    def wait(self, fingerprint: str, *, request: str, thread: str, asked: str) -> None:
        """The incident's heal waits for `request`: remembered, and the incident `waiting`."""
        with self._db.transaction():
            self._db.execute(
                "INSERT INTO waits VALUES (?, ?, ?, ?, ?) ON CONFLICT (fingerprint) DO UPDATE "
                "SET request = excluded.request, thread = excluded.thread, "
                "asked = excluded.asked, since = excluded.since",
                (fingerprint, request, thread, asked, time.time()),
            )
            self._db.execute(
                "UPDATE incidents SET state = 'waiting' WHERE fingerprint = ?", (fingerprint,)
            )

    def waiting(self) -> list[tuple[Incident, Wait]]:
        """The waiting incidents and what each waits for, oldest first."""
        rows = self._db.execute(
            "SELECT fingerprint, request, thread, asked, since FROM waits ORDER BY since"
        ).fetchall()
        found = []
        for fingerprint, request, thread, asked, since in rows:
            incident = self.get(str(fingerprint))
            if incident is not None and incident.state == "waiting":
                found.append(
                    (incident, Wait(str(fingerprint), str(request), str(thread), str(asked), since))
                )
        return found

    def take_up(self, fingerprint: str) -> bool:
        """Move a waiting incident to handling; False when it was not waiting (another pass,
        or another watcher, took it up first, or it was resolved meanwhile)."""
        with self._db.transaction():
            cursor = self._db.execute(
                "UPDATE incidents SET state = 'handling' "
                "WHERE fingerprint = ? AND state = 'waiting'",
                (fingerprint,),
            )
            if cursor.rowcount > 0:
                self._db.execute("DELETE FROM waits WHERE fingerprint = ?", (fingerprint,))
                return True
        return False

    def take_open(self, fingerprint: str) -> bool:
        """Move an open incident to handling; False when it was not open (being handled,
        waiting for a person, or resolved)."""
        cursor = self._db.execute(
            "UPDATE incidents SET state = 'handling' WHERE fingerprint = ? AND state = 'open'",
            (fingerprint,),
        )
        return cursor.rowcount > 0

    def resolve(self, fingerprint: str) -> bool:
        """Mark it resolved; False when it was not open (or handling) to begin with."""
        cursor = self._db.execute(
            "UPDATE incidents SET state = 'resolved' WHERE fingerprint = ? AND state != 'resolved'",
            (fingerprint,),
        )
        return cursor.rowcount > 0

    def get(self, fingerprint: str) -> Incident | None:
        row = self._db.execute(
            f"SELECT {_COLUMNS} FROM incidents WHERE fingerprint = ?", (fingerprint,)
        ).fetchone()
        return None if row is None else _incident(row)

    def unresolved(self) -> list[Incident]:
        rows = self._db.execute(
            f"SELECT {_COLUMNS} FROM incidents WHERE state != 'resolved' ORDER BY first_seen"
        ).fetchall()
        return [_incident(row) for row in rows]

    def begin(self, signal: Signal, *, thread: str) -> Run:
        """Book a heal of `signal`'s subject on `thread` by this process, unless one is booked
        already: an interrupted one is taken over (continue on its thread); a live one is
        returned as it is, its pid not this process's (do not run a second heal beside it)."""
        with self._db.transaction():
            earlier = self.run(signal.fingerprint)
            if earlier is None:
                self._db.execute(
                    "INSERT INTO runs VALUES (?, ?, ?, ?, ?)",
                    (signal.fingerprint, thread, *_this_process(), time.time()),
                )
            elif earlier.interrupted:  # taken over by this process
                self._db.execute(
                    "UPDATE runs SET pid = ?, host = ? WHERE fingerprint = ?",
                    (*_this_process(), signal.fingerprint),
                )
        self.record(signal)
        self.set_state(signal.fingerprint, "handling")
        booked = self.run(signal.fingerprint)
        assert booked is not None  # written above, in this connection
        return booked

    def end(self, fingerprint: str, *, thread: str) -> None:
        """The heal on `thread` ended (fixed, escalated, waiting or failed): forget the run, and
        hand the incident back as open (its booking then says fixed, waiting or still open)."""
        with self._db.transaction():
            ended = self._db.execute(
                "DELETE FROM runs WHERE fingerprint = ? AND thread = ?", (fingerprint, thread)
            )
            if ended.rowcount:
                self._db.execute(
                    "UPDATE incidents SET state = 'open' WHERE fingerprint = ? "
                    "AND state = 'handling'",
                    (fingerprint,),
                )

    def disown(self) -> list[str]:
        """Start a term of the crew's Lease: nobody handles anything now. Every run of another
        process counts as interrupted (its next heal continues its thread), and every incident
        left `handling` (by a replica that lost the Lease, or by this one in a term it lost) is
        open again, for this term's desk to take over. Only for the Lease's holder, whose
        predecessors stopped before it took the Lease. The fingerprints opened again."""
        with self._db.transaction():
            pid, host = _this_process()
            self._db.execute(
                "UPDATE runs SET host = ? WHERE NOT (pid = ? AND host = ?)", (DISOWNED, pid, host)
            )
            rows = self._db.execute(
                "SELECT fingerprint FROM incidents WHERE state = 'handling' ORDER BY first_seen"
            ).fetchall()
            self._db.execute("UPDATE incidents SET state = 'open' WHERE state = 'handling'")
        return [str(row[0]) for row in rows]

    def run(self, fingerprint: str) -> Run | None:
        row = self._db.execute(
            "SELECT fingerprint, thread, pid, host, since FROM runs WHERE fingerprint = ?",
            (fingerprint,),
        ).fetchone()
        return None if row is None else Run(str(row[0]), str(row[1]), *row[2:])

    def runs(self) -> list[Run]:
        rows = self._db.execute("SELECT fingerprint, thread, pid, host, since FROM runs")
        return [Run(str(r[0]), str(r[1]), *r[2:]) for r in rows.fetchall()]

    def all(self) -> list[Incident]:
        rows = self._db.execute(f"SELECT {_COLUMNS} FROM incidents ORDER BY first_seen")
        return [_incident(row) for row in rows.fetchall()]


def _this_process() -> tuple[int, str]:
    return os.getpid(), socket.gethostname()


def _incident(row: tuple[object, ...]) -> Incident:
    fingerprint, kind, namespace, name, finding, summary, source, state, *rest = row
    first_seen, last_seen, count, opened = rest
    return Incident(
        fingerprint=str(fingerprint),
        kind=str(kind),
        namespace=str(namespace),
        name=str(name),
        finding=str(finding),
        summary=str(summary),
        source=cast(Source, source),
        state=cast(State, state),
        first_seen=float(cast(float, first_seen)),
        last_seen=float(cast(float, last_seen)),
        count=int(cast(int, count)),
        opened=int(cast(int, opened)),
    )
