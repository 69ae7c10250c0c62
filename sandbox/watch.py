"""Watch streams: chunked newline-delimited WatchEvents, resumable from a resourceVersion.

Three ways to start, as in Kubernetes:
- no resourceVersion (or "0"): synthetic ADDED events for the current state, then live changes;
- a resourceVersion: replay kept history after it, then live changes; older than the history ->
  one ERROR event carrying a 410 Expired Status (clients relist);
- watch-list (`sendInitialEvents=true`, `resourceVersionMatch=NotOlderThan`): the current state as
  ADDED, then a BOOKMARK annotated `k8s.io/initial-events-end: "true"` (kubectl 1.37 waits for it).

Subscribing and computing the initial events happen with no await in between, so no change can
fall into a gap or be sent twice. Selector-filtered watches see an object that stops matching as
DELETED and one that starts matching as ADDED. The stream ends at `timeoutSeconds` or when the
client goes away.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from sandbox.errors import ApiError, Invalid
from sandbox.http import Receive, Send, end_stream, start_stream, stream_chunk
from sandbox.listing import ListQuery
from sandbox.registry import ResourceType
from sandbox.store import Change, Obj, Store

DEFAULT_TIMEOUT = 1800.0
BOOKMARK_INTERVAL = 30.0
INITIAL_EVENTS_END = "k8s.io/initial-events-end"

Event = tuple[str, Any]  # (type, object)
Renderer = Callable[[Obj], Any]  # object -> what the event carries (the object, or a Table)


@dataclass(frozen=True)
class WatchRequest:
    rt: ResourceType
    query: ListQuery
    resource_version: str
    send_initial_events: bool
    bookmarks: bool
    timeout: float

    def check(self, rv_match: str) -> None:
        if self.send_initial_events and rv_match != "NotOlderThan":
            raise Invalid(
                "resourceVersionMatch: Forbidden: sendInitialEvents requires setting "
                "resourceVersionMatch to NotOlderThan"
            )


class Streams:
    """The open watch streams of a server, so shutting down can end them instead of waiting."""

    def __init__(self) -> None:
        self._queues: set[asyncio.Queue[Change | None]] = set()
        self.closing = False

    def open(self) -> asyncio.Queue[Change | None]:
        queue: asyncio.Queue[Change | None] = asyncio.Queue()
        self._queues.add(queue)
        if self.closing:
            queue.put_nowait(None)
        return queue

    def done(self, queue: asyncio.Queue[Change | None]) -> None:
        self._queues.discard(queue)

    def close_all(self) -> None:
        self.closing = True
        for queue in self._queues:
            queue.put_nowait(None)


async def serve(
    store: Store,
    request: WatchRequest,
    send: Send,
    receive: Receive,
    render: Renderer,
    *,
    content_type: str,
    streams: Streams,
) -> None:
    queue = streams.open()
    namespace = request.query.namespace

    def on_change(change: Change) -> None:
        if namespace is None or change.namespace == namespace:
            queue.put_nowait(change)

    store.subscribe(request.rt.key, on_change)
    try:
        initial = _initial_events(store, request, render)  # no await since subscribing
        disconnect = asyncio.create_task(_wait_disconnect(receive, queue))
        try:
            await start_stream(send, content_type)
            if initial:
                await stream_chunk(send, b"".join(_line(e) for e in initial))
            if not any(kind == "ERROR" for kind, _ in initial):  # an ERROR ends the stream
                await _pump(store, request, queue, send, render)
        finally:
            disconnect.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await disconnect
        await end_stream(send)
    finally:
        store.unsubscribe(request.rt.key, on_change)
        streams.done(queue)


def _initial_events(store: Store, request: WatchRequest, render: Renderer) -> list[Event]:
    rt, query = request.rt, request.query
    if request.send_initial_events or request.resource_version in ("", "0"):
        events: list[Event] = [
            ("ADDED", render(o)) for o in store.list(rt.key, query.namespace) if query.matches(o)
        ]
        if request.send_initial_events:
            events.append(("BOOKMARK", _bookmark(rt, store.rv, initial_end=True)))
        return events
    try:
        since = int(request.resource_version)
    except ValueError:
        return [
            (
                "ERROR",
                Invalid(
                    f'invalid resourceVersion "{request.resource_version}": must be an integer'
                ).status(),
            )
        ]
    try:
        changes = store.changes_since(since, rt.key)
    except ApiError as exc:
        return [("ERROR", exc.status())]
    mine = [c for c in changes if query.namespace is None or c.namespace == query.namespace]
    return [e for c in mine if (e := _filtered(c, request, render)) is not None]


async def _pump(
    store: Store,
    request: WatchRequest,
    queue: asyncio.Queue[Change | None],
    send: Send,
    render: Renderer,
) -> None:
    deadline = time.monotonic() + request.timeout
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return
        try:
            first = await asyncio.wait_for(queue.get(), min(remaining, BOOKMARK_INTERVAL))
        except TimeoutError:
            if request.bookmarks and deadline - time.monotonic() > 0:
                await stream_chunk(send, _line(("BOOKMARK", _bookmark(request.rt, store.rv))))
            continue
        batch = [first]
        while not queue.empty():  # coalesce a burst into one chunk
            batch.append(queue.get_nowait())
        if None in batch:
            return  # the client went away
        lines = [_line(e) for c in batch if c and (e := _filtered(c, request, render))]
        if lines:
            await stream_chunk(send, b"".join(lines))


def _filtered(change: Change, request: WatchRequest, render: Renderer) -> Event | None:
    query = request.query
    now_matches = query.matches(change.object)
    was_matching = change.old is not None and query.matches(change.old)
    if change.type == "DELETED":
        return ("DELETED", render(change.object)) if (now_matches or was_matching) else None
    if change.type == "ADDED" or not was_matching:
        return ("ADDED", render(change.object)) if now_matches else None
    if now_matches:
        return ("MODIFIED", render(change.object))
    return ("DELETED", render(change.object))


def _bookmark(rt: ResourceType, rv: int, *, initial_end: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"resourceVersion": str(rv)}
    if initial_end:
        meta["annotations"] = {INITIAL_EVENTS_END: "true"}
    return {"kind": rt.kind, "apiVersion": rt.api_version, "metadata": meta}


def _line(event: Event) -> bytes:
    return orjson.dumps({"type": event[0], "object": event[1]}) + b"\n"


async def _wait_disconnect(receive: Receive, queue: asyncio.Queue[Change | None]) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            queue.put_nowait(None)
            return
