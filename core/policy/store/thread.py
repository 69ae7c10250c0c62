"""The store on one worker thread of its own, for callers on an event loop.

The SQLite store's connection belongs to the thread that opened it, and the Kubernetes store
waits on HTTP; so the store is opened, used and closed on one worker thread, and async callers
await it without blocking their loop. Calls are serialised there, which the store's own
transactions would do anyway. Each call runs in a copy of its caller's context, so a span
current where it was made (core.telemetry) is the parent of what the store does for it.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from core.policy.store.base import Store

T = TypeVar("T")


class StoreThread:
    """The store, opened, used and closed on one worker thread of its own."""

    def __init__(self, opener: Callable[[], Store]) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="policy-store")
        try:
            self._store = self._pool.submit(opener).result()
        except BaseException:
            self._pool.shutdown()
            raise

    def call(self, fn: Callable[[Store], T]) -> T:
        """`fn(store)`, waited for: for start-up, before any event loop runs."""
        return self._pool.submit(contextvars.copy_context().run, fn, self._store).result()

    async def run(self, fn: Callable[[Store], T]) -> T:
        """`fn(store)` on the store's thread, awaited without blocking the event loop."""
        called = self._pool.submit(contextvars.copy_context().run, fn, self._store)
        return await asyncio.wrap_future(called)

    def close(self) -> None:
        self.call(lambda store: store.close())
        self._pool.shutdown()
