"""Keeping one `Store` in step with the API server: list once, then watch, as client-go's
reflector does.

The list is paged (`PAGE` objects a request, so a 50,000-pod cluster is never one answer held
whole), and the watch starts from the list's resourceVersion with bookmarks asked for, so the
version kept moves on even when nothing of this kind changes. A watch the API server ends (its
timeout, `WATCH_S` plus a random part so many servers do not all come back at once, or a broken
connection) is opened again from the last version seen. A version the API server no longer keeps
(410 Expired: this cache was away longer than its history) means a new list, which replaces
the store whole: an object deleted meanwhile is gone from it.

A kind this identity may not list or watch (403), or the cluster does not serve (404), ends the
reflector with `refused` set, and reads go to the API server as before. Other failures are
retried with a backoff doubling to `BACKOFF_MAX_S`, unless nobody read from the cache for
`UNREACHED_S`. A reflector nobody has read from for `idle_s` stops by itself and drops what it
kept; the next read starts one again.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Iterator

from core.connection import Api, Json, Watch
from core.errors import Expired, NotFound, PermissionDenied, ToolError
from mcp_servers.common.cache.store import Kind, Store

log = logging.getLogger(__name__)

PAGE = 500
WATCH_S = 300
BACKOFF_S = 0.8
BACKOFF_MAX_S = 30.0
UNREACHED_S = 60.0  # a failing reflector nobody read from for this long gives up
_jitter = random.Random()  # not the shared generator, whose state others may own


class TooLarge(Exception):
    """The cache would outgrow its memory budget with this kind."""


class Reflector:
    def __init__(
        self,
        api: Callable[[], Api],
        kind: Kind,
        namespace: str | None,
        *,
        idle_s: float,
        fits: Callable[[], bool],
    ) -> None:
        self.api = api
        self.kind = kind
        self.namespace = namespace  # None: every namespace (or a cluster-scoped kind)
        self.store = Store(kind)
        self.idle_s = idle_s
        self.fits = fits  # False once the caches together exceed their budget
        self.synced = threading.Event()  # the store holds a whole list, kept in step
        self.refused: ToolError | TooLarge | None = None
        self.lists = 0  # how many times the whole state was listed (1 + re-lists after 410)
        self.last_read = time.monotonic()
        self.ended = 0.0  # when the loop ended (monotonic), 0 while it runs
        self._version = ""  # where the watch resumes; "" lists first
        self._stop = threading.Event()
        self._watch: Watch | None = None
        self._thread = threading.Thread(
            target=self._run, name=f"cache-{kind.plural}-{namespace or 'all'}", daemon=True
        )

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def start(self) -> Reflector:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        watch = self._watch
        if watch is not None:
            watch.close()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=5)

    def wait_synced(self, timeout: float) -> bool:
        """Wait up to `timeout` s for the first list to be whole; False when it is not (still
        listing, refused, or stopped)."""
        deadline = time.monotonic() + timeout
        while not self.synced.is_set() and self.refused is None and self.alive:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self.synced.wait(min(left, 0.5))
        return self.synced.is_set() and self.refused is None

    def read(self) -> Store | None:
        """The store, when it may answer (synced, not refused); marks the reflector used."""
        self.last_read = time.monotonic()
        return self.store if self.synced.is_set() and self.refused is None else None

    # -- the loop ----------------------------------------------------------------------------------

    def _run(self) -> None:
        backoff = BACKOFF_S
        while not self._stop.is_set() and not self._idle():
            try:
                if not self._version:
                    self._list()
                self._follow()
                backoff = BACKOFF_S
            except Expired:
                self._version = ""  # too far behind: the next turn lists again
            except (PermissionDenied, NotFound, TooLarge) as exc:
                self.refused = exc
                log.info("cache of %s: %s", self.kind.plural, exc)
                break
            except ToolError as exc:
                if self._idle(UNREACHED_S):
                    break  # nobody waits for it: the next read starts another
                log.info("cache of %s: %s; again in %.1f s", self.kind.plural, exc, backoff)
                self._stop.wait(backoff * (1 + _jitter.random() / 2))
                backoff = min(backoff * 2, BACKOFF_MAX_S)
        self.synced.clear()
        self.store.replace([], "")  # nothing kept by a reflector that stopped
        self.ended = time.monotonic()

    def _idle(self, seconds: float | None = None) -> bool:
        """Whether nobody read from this cache for `seconds` (default: its idle_s)."""
        return time.monotonic() - self.last_read > (self.idle_s if seconds is None else seconds)

    def _list(self) -> None:
        api, path = self.api(), self.kind.path(self.namespace)
        listed = {"version": ""}

        def pages() -> Iterator[Json]:
            token = ""
            while True:
                page = api.get(path, what=f"{self.kind.plural} for the cache", limit=PAGE,
                               **{"continue": token})  # fmt: skip
                yield from page.get("items") or []
                metadata = page.get("metadata") or {}
                listed["version"] = str(metadata.get("resourceVersion") or "")
                token = str(metadata.get("continue") or "")
                if not token:
                    return

        self.store.replace(pages(), lambda: listed["version"])
        self._version = self.store.version
        self.lists += 1
        if not self.fits():
            raise TooLarge(f"{len(self.store)} {self.kind.plural} exceed the cache's budget")
        self.synced.set()

    def _follow(self) -> None:
        """One watch from the version kept, applied to the store until it ends."""
        timeout = int(WATCH_S * (1 + _jitter.random()))
        watch = self.api().watch(
            self.kind.path(self.namespace),
            what=f"{self.kind.plural} for the cache",
            timeout_seconds=timeout,
            resourceVersion=self._version,
            allowWatchBookmarks=True,
        )
        self._watch = watch
        try:
            if self._stop.is_set():
                return
            for event, obj in watch:
                self.store.apply(event, obj)
                self._version = self.store.version
                if self._stop.is_set() or self._idle():
                    return
                if event != "BOOKMARK" and not self.fits():
                    raise TooLarge(f"{len(self.store)} {self.kind.plural} exceed the budget")
        finally:
            self._watch = None
            watch.close()
