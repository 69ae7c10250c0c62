"""The store on one worker thread of its own, for callers on an event loop.

The SQLite store's connection belongs to the thread that opened it, and the Kubernetes store
waits on HTTP; so the store is opened, used and closed on one worker thread, and async callers
await it without blocking their loop. Calls are serialised there, which the store's own
transactions would do anyway.
"""

from __future__ import annotations

import asyncio
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
        return self._pool.submit(fn, self._store).result()

    async def run(self, fn: Callable[[Store], T]) -> T:
        """`fn(store)` on the store's thread, awaited without blocking the event loop."""
        return await asyncio.wrap_future(self._pool.submit(fn, self._store))

    def close(self) -> None:
        self.call(lambda store: store.close())
        self._pool.shutdown()
