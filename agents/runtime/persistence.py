"""Where the crew keeps what outlives one process: the agents' checkpoints and long-term memory,
and the tables of the incident book and the Slack ledger.

Two backends, chosen by `$KUBECREW_DATABASE_URL`:

- unset, the embedded default: SQLite files in the cluster's state folder (`core.home`). An
  agent's are in its folder (`$KUBECREW_HOME/clusters/<cluster>/agents/<agent>/`, so one
  cluster's never answer for another): `checkpoints.sqlite` (LangGraph's checkpointer: every
  step of every thread, so an interrupted run resumes where it stopped and a node that finished
  is never run again) and `memory.sqlite` (LangGraph's store: past incidents, see `memory`).
- set, a libpq URL (`postgresql://user:password@host:5432/kubecrew`): the same in that
  PostgreSQL database, with LangGraph's own Postgres checkpointer and store, so the replicas of
  a crew resume each other's threads and share one incident book. The database stands for one
  cluster's state folder, and each SQLite file becomes a schema: an agent's checkpoints and
  memory are in the schema named as its folder (`dev_team`), so two agents' threads stay apart
  as their files do; the incident book is in `incidents`, the Slack ledger in `slack`.

The async saver and store are used because the tools are MCP sessions, which are async. The
incident book and the ledger are sync, and written through `Sql`: one connection to the file or
the schema, speaking the SQL both understand (each statement written once, with SQLite's `?`
placeholders), whose `transaction()` lets one writer in at a time: `BEGIN IMMEDIATE` on the
file; on PostgreSQL a transaction that first takes the schema's advisory lock, so a read then a
write in it is atomic across processes and machines exactly as on one file. Creating a schema's
tables takes the same lock (two replicas starting at once on an empty database).

A database that does not answer, or refuses the credentials, is `core.errors.Unavailable`, one
line naming its host and port (a URL that is none, `InvalidArgument`); no message ever shows
the password.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import anyio
import psycopg
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.store.base import BaseStore
from langgraph.store.postgres.aio import AsyncPostgresStore
from langgraph.store.sqlite.aio import AsyncSqliteStore
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.rows import DictRow, dict_row

from core.errors import InvalidArgument, Unavailable
from core.files import private
from core.home import state_home

DATABASE_ENV = "KUBECREW_DATABASE_URL"
CONNECT_TIMEOUT_S = 10  # unless the URL sets connect_timeout
_POLL_S = 0.05
Dialect = Literal["sqlite", "postgres"]


def agent_home(agent: str, environ: Mapping[str, str] = os.environ) -> Path:
    """The agent's folder in the state of the cluster it works on (`core.home`)."""
    return state_home(environ) / "agents" / agent


def database_url(environ: Mapping[str, str] = os.environ) -> str | None:
    """`$KUBECREW_DATABASE_URL`; None: the embedded SQLite files."""
    return environ.get(DATABASE_ENV, "").strip() or None


@dataclass(frozen=True)
class Durable:
    checkpointer: BaseCheckpointSaver[str]
    store: BaseStore


@asynccontextmanager
async def open_durable(
    home: Path, environ: Mapping[str, str] = os.environ
) -> AsyncIterator[Durable]:
    """The agent's checkpoints and memory: in `$KUBECREW_DATABASE_URL`'s database when it is
    set (in the schema named as `home`), else in SQLite files in `home`."""
    url = database_url(environ)
    opened = _in_files(home) if url is None else _in_database(url, schema=home.name)
    async with opened as durable:
        yield durable


@asynccontextmanager
async def _in_files(home: Path) -> AsyncIterator[Durable]:
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    for name in ("checkpoints.sqlite", "memory.sqlite"):
        private(home / name)  # they hold what the tools answered, conversations and incidents
    async with (
        AsyncSqliteSaver.from_conn_string(str(home / "checkpoints.sqlite")) as checkpointer,
        AsyncSqliteStore.from_conn_string(str(home / "memory.sqlite")) as store,
    ):
        await checkpointer.setup()
        await store.setup()
        yield Durable(checkpointer, store)


@asynccontextmanager
async def _in_database(url: str, *, schema: str) -> AsyncIterator[Durable]:
    # A connection each, as LangGraph's from_conn_string opens them: each keeps its own lock.
    async with await _connect_async(url) as saving, await _connect_async(url) as remembering:
        checkpointer, store = AsyncPostgresSaver(saving), AsyncPostgresStore(remembering)
        try:
            async with _setting_up(saving, schema):
                await saving.execute(_create_schema(schema))
                for connection in (saving, remembering):
                    await connection.execute(_use_schema(schema))
                await checkpointer.setup()
                await store.setup()
        except psycopg.Error as exc:  # gone meanwhile, or its user may not create the schema
            raise _unavailable(url, exc) from exc
        yield Durable(checkpointer, store)


@asynccontextmanager
async def _setting_up(
    connection: psycopg.AsyncConnection[DictRow], schema: str
) -> AsyncIterator[None]:
    """The schema's lock, held while its tables are made. Polled, not waited for inside a
    statement: LangGraph's setup builds indexes CONCURRENTLY, which waits for every open
    snapshot, a waiting statement's too (a deadlock PostgreSQL would end with an error)."""
    key = (_key(schema),)
    while True:
        taken = await connection.execute("SELECT pg_try_advisory_lock(%s) AS taken", key)
        row = await taken.fetchone()
        if row is not None and row["taken"]:
            break
        await anyio.sleep(_POLL_S)
    try:
        yield
    finally:
        await connection.execute("SELECT pg_advisory_unlock(%s)", key)


class Rows(Protocol):
    """What a statement answered, from either database."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Sql(Protocol):
    """One connection to a SQLite file, or to a schema of `$KUBECREW_DATABASE_URL`'s database."""

    dialect: Dialect
    where: str  # the file, or the schema and the database's host and port (never a password)

    def execute(self, statement: str, params: Sequence[object] = ()) -> Rows:
        """One statement, written with `?` placeholders: on its own, or in `transaction`."""
        ...

    def transaction(self) -> AbstractContextManager[None]:
        """One writer at a time: committed at the end, rolled back on any exception."""
        ...

    def close(self) -> None: ...


def open_sql(
    path: Path, *, schema: str, timeout: float = 10, environ: Mapping[str, str] = os.environ
) -> Sql:
    """`schema` in `$KUBECREW_DATABASE_URL`'s database when it is set, else the SQLite file
    `path` (waiting up to `timeout` seconds for another writer)."""
    url = database_url(environ)
    return SqliteFile(path, timeout=timeout) if url is None else PostgresSchema(url, schema=schema)


class SqliteFile:
    dialect: Dialect = "sqlite"

    def __init__(self, path: Path, *, timeout: float = 10) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path, self.where = path, str(path)
        try:
            self._db = sqlite3.connect(path, isolation_level=None, timeout=timeout)
        except sqlite3.Error as exc:
            raise Unavailable(f"cannot open {path}: {exc}") from exc

    def execute(self, statement: str, params: Sequence[object] = ()) -> Rows:
        return self._db.execute(statement, params)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def close(self) -> None:
        self._db.close()


class PostgresSchema:
    dialect: Dialect = "postgres"

    def __init__(self, url: str, *, schema: str) -> None:
        self.url, self.schema = url, schema
        self.where = f"schema {schema} of the database at {_where(url)}"
        self._db = _connect(url)
        try:
            with self.transaction():
                self._db.execute(_create_schema(schema))
            self._db.execute(_use_schema(schema))
        except psycopg.Error as exc:  # its user may not create the schema
            self._db.close()
            raise _unavailable(url, exc) from exc
        except BaseException:
            self._db.close()
            raise

    def execute(self, statement: str, params: Sequence[object] = ()) -> Rows:
        try:
            return self._db.execute(statement.replace("?", "%s"), params)
        except psycopg.OperationalError as exc:  # the server went away meanwhile
            raise _unavailable(self.url, exc) from exc

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._db.transaction():
            self.execute("SELECT pg_advisory_xact_lock(?)", (_key(self.schema),))
            yield

    def close(self) -> None:
        self._db.close()


def _where(url: str) -> str:
    """`host:port` of a libpq URL: what a message says of it, never its password."""
    parts = _parts(url)
    return f"{parts.get('host') or 'localhost'}:{parts.get('port') or 5432}"


def _connect(url: str) -> psycopg.Connection[Any]:
    try:
        return psycopg.Connection.connect(_timed(url), autocommit=True)
    except psycopg.OperationalError as exc:
        raise _unavailable(url, exc) from exc


async def _connect_async(url: str) -> psycopg.AsyncConnection[DictRow]:
    try:
        return await psycopg.AsyncConnection.connect(
            _timed(url), autocommit=True, prepare_threshold=0, row_factory=dict_row
        )
    except psycopg.OperationalError as exc:
        raise _unavailable(url, exc) from exc


def _timed(url: str) -> str:
    """`url` with a connect timeout, unless it has one: a host that drops packets must not
    hang a start forever."""
    if "connect_timeout" in _parts(url):
        return url
    return make_conninfo(url, connect_timeout=CONNECT_TIMEOUT_S)


def _parts(url: str) -> dict[str, Any]:
    try:
        return conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:  # its words may quote the URL: not shown
        raise InvalidArgument(
            f"${DATABASE_ENV} is not a PostgreSQL URL: write it as "
            "postgresql://user:password@host:5432/database"
        ) from exc


def _unavailable(url: str, exc: psycopg.Error) -> Unavailable:
    """One line: where, and libpq's reason ("Connection refused", "password authentication
    failed for user ..."), with the password masked should it ever appear."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    reason = first.rpartition(" failed: ")[2].removeprefix("FATAL:").strip()
    password = str(_parts(url).get("password") or "")
    if password:
        reason = reason.replace(password, "***")
    return Unavailable(
        f"cannot use the database at {_where(url)} (${DATABASE_ENV}): {' '.join(reason.split())}; "
        "check the URL, and that PostgreSQL runs there, lets its user in and lets it create "
        "schemas"
    )


def _key(schema: str) -> int:
    """The schema's advisory lock: a signed 64-bit number of its name."""
    digest = hashlib.sha256(f"kubecrew:{schema}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _create_schema(schema: str) -> sql.Composed:
    return sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema))


def _use_schema(schema: str) -> sql.Composed:
    return sql.SQL("SET search_path TO {}").format(sql.Identifier(schema))
