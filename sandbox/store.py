"""Object storage: one resourceVersion counter, a bounded change history, optional SQLite.

The store is deliberately dumb: it keeps JSON-shaped objects by (group, plural, namespace, name),
stamps every write with the next global resourceVersion, remembers the last `history` changes so
watches can resume, and fans each change out to subscribers. It knows nothing of validation,
admission, HTTP or RBAC: the API layer decides *what* to write, the store makes it durable and
visible.

Objects handed out are shared, never copies: callers must treat them as immutable and build a new
dict to change anything. That keeps lists of thousands of objects cheap.

Durability: with a path, every write goes to SQLite (WAL) and is committed before it is
acknowledged (`group_commit` lets concurrent requests share one commit), so a crash of the
process loses no acknowledged write. Everything runs on one thread (the server's
event loop), so there is no locking.
"""

from __future__ import annotations

import asyncio
import builtins
import os
import sqlite3
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson

from sandbox.errors import Gone

Key = tuple[str, str]  # (group, plural)
Obj = dict[str, Any]
EventType = Literal["ADDED", "MODIFIED", "DELETED"]


@dataclass(frozen=True, slots=True)
class Change:
    """One committed write, as a watch delivers it."""

    type: EventType
    key: Key
    namespace: str
    name: str
    object: Obj
    rv: int
    old: Obj | None = None  # the state before, so selector-filtered watches see objects leave


Subscriber = Callable[[Change], None]


class Store:
    def __init__(self, path: Path | None = None, *, history: int = 50_000) -> None:
        self._objects: dict[Key, dict[str, dict[str, Obj]]] = {}
        self._history: deque[Change] = deque(maxlen=history)
        self._subscribers: dict[Key, set[Subscriber]] = {}
        self._observers: list[Subscriber] = []  # every change of every key (indexes, GC)
        self._key_versions: dict[Key, int] = {}  # the last resourceVersion written per key
        self._undelivered: list[Change] = []  # changes watchers see once they are committed
        self.rv = 0
        self._meta: dict[str, int] = {}  # small durable facts beside the objects (the clock)
        self._db: sqlite3.Connection | None = None
        self._dirty = False
        if path is not None:
            self._open(path)

    # -- reads ---------------------------------------------------------------------------------

    def get(self, key: Key, namespace: str, name: str) -> Obj | None:
        return self._objects.get(key, {}).get(namespace, {}).get(name)

    def list(self, key: Key, namespace: str | None = None) -> list[Obj]:
        """Objects sorted by (namespace, name), as Kubernetes lists them."""
        spaces = self._objects.get(key, {})
        if namespace is not None:
            bucket = spaces.get(namespace, {})
            return [bucket[n] for n in sorted(bucket)]
        return [spaces[ns][n] for ns in sorted(spaces) for n in sorted(spaces[ns])]

    def objects(self, group: str, plural: str, namespace: str | None = None) -> builtins.list[Obj]:
        return self.list((group, plural), namespace)

    def count(self, key: Key) -> int:
        return sum(len(b) for b in self._objects.get(key, {}).values())

    def resource_keys(self) -> Iterator[Key]:
        return iter(list(self._objects))

    # -- writes --------------------------------------------------------------------------------

    def next_rv(self) -> int:
        self.rv += 1
        return self.rv

    def put(self, key: Key, obj: Obj) -> Obj:
        """Store `obj` (its metadata.resourceVersion must already be set by `stamp`)."""
        meta = obj["metadata"]
        namespace, name = meta.get("namespace", ""), meta["name"]
        bucket = self._objects.setdefault(key, {}).setdefault(namespace, {})
        old = bucket.get(name)
        bucket[name] = obj
        rv = int(meta["resourceVersion"])
        self._persist(key, namespace, name, obj)
        self._publish(Change("MODIFIED" if old else "ADDED", key, namespace, name, obj, rv, old))
        return obj

    def remove(self, key: Key, namespace: str, name: str, final: Obj) -> None:
        """Drop an object; `final` is its last state (stamped) that DELETED events carry."""
        bucket = self._objects.get(key, {}).get(namespace)
        old = None
        if bucket is not None:
            old = bucket.pop(name, None)
            if not bucket:
                del self._objects[key][namespace]
        self._persist(key, namespace, name, None)
        rv = int(final["metadata"]["resourceVersion"])
        self._publish(Change("DELETED", key, namespace, name, final, rv, old))

    def stamp(self, obj: Obj) -> Obj:
        """A copy of `obj` with a fresh resourceVersion in its metadata (top level copied only)."""
        stamped = dict(obj)
        stamped["metadata"] = {**obj["metadata"], "resourceVersion": str(self.next_rv())}
        return stamped

    # -- watch ---------------------------------------------------------------------------------

    def changes_since(self, rv: int, key: Key) -> builtins.list[Change]:
        """Changes to `key` after `rv`; Gone when `rv` is older than the kept history."""
        if rv >= self.rv:
            return []
        oldest = self._history[0].rv if self._history else self.rv + 1
        if rv < oldest - 1:
            raise Gone(f"too old resource version: {rv} ({oldest - 1})")
        return [c for c in self._history if c.rv > rv and c.key == key]

    def subscribe(self, key: Key, subscriber: Subscriber) -> None:
        self._subscribers.setdefault(key, set()).add(subscriber)

    def unsubscribe(self, key: Key, subscriber: Subscriber) -> None:
        self._subscribers.get(key, set()).discard(subscriber)

    def observe(self, observer: Subscriber) -> None:
        """Call `observer` for every change, synchronously, before key subscribers."""
        self._observers.append(observer)

    def key_version(self, key: Key) -> int:
        """The resourceVersion of the last change to `key` (0 if none since start)."""
        return self._key_versions.get(key, 0)

    def _publish(self, change: Change) -> None:
        self._history.append(change)
        self._key_versions[change.key] = change.rv
        for observer in self._observers:
            observer(change)
        if self._db is None:
            self._deliver(change)
        else:  # a watcher must never see a write that a crash could still take back
            self._undelivered.append(change)

    def _deliver(self, change: Change) -> None:
        for subscriber in list(self._subscribers.get(change.key, ())):
            subscriber(change)

    # -- persistence ---------------------------------------------------------------------------

    def _open(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        # The state holds Secrets' values: only its owner may read it (SQLite gives its -wal
        # and -shm files the database file's mode).
        os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
        path.chmod(0o600)
        db = sqlite3.connect(path, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: survives a process crash
        db.execute(
            "CREATE TABLE IF NOT EXISTS objects (grp TEXT, plural TEXT, ns TEXT, name TEXT,"
            " body BLOB, PRIMARY KEY (grp, plural, ns, name))"
        )
        db.execute("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v INTEGER)")
        for grp, plural, ns, name, body in db.execute("SELECT * FROM objects"):
            self._objects.setdefault((grp, plural), {}).setdefault(ns, {})[name] = orjson.loads(
                body
            )
        self._meta = {str(k): int(v) for k, v in db.execute("SELECT k, v FROM meta")}
        self.rv = self._meta.pop("rv", 0)
        self._db = db

    def _persist(self, key: Key, namespace: str, name: str, obj: Obj | None) -> None:
        if self._db is None:
            return
        # The statements join the open transaction; `commit` writes the counter and ends it,
        # so objects and the counter always become durable together.
        if obj is None:
            self._db.execute(
                "DELETE FROM objects WHERE grp=? AND plural=? AND ns=? AND name=?",
                (*key, namespace, name),
            )
        else:
            self._db.execute(
                "INSERT OR REPLACE INTO objects VALUES (?, ?, ?, ?, ?)",
                (*key, namespace, name, orjson.dumps(obj)),
            )
        self._dirty = True

    def commit(self) -> None:
        """Make every write so far durable. Call before acknowledging a write to anyone."""
        if self._db is not None and self._dirty:
            self._db.executemany(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)", [*self._meta.items(), ("rv", self.rv)]
            )
            self._db.commit()
            self._dirty = False
        pending, self._undelivered = self._undelivered, []
        for change in pending:
            self._deliver(change)

    def meta(self, key: str) -> int | None:
        """A small durable fact kept beside the objects (None when never set)."""
        return self._meta.get(key)

    def set_meta(self, key: str, value: int) -> None:
        """Keep `value` under `key`; durable with the next commit that writes anything."""
        self._meta[key] = value

    async def group_commit(self) -> None:
        """Let the writes of other ready requests join, then commit them all at once."""
        if self._db is not None:
            await asyncio.sleep(0)
            self.commit()

    def close(self) -> None:
        if self._db is not None:
            self.commit()
            self._db.close()
            self._db = None
