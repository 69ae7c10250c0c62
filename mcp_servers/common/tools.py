"""What every server's tool layer shares: the read-only annotation, and getting the blocking
engine off the event loop.

The engines are plain blocking Python (the Kubernetes client, httpx, GitPython); a tool that
waits on them in the event loop would stall every other request of an HTTP transport, so async
tools hand the work to a worker thread with `off_loop`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import anyio.to_thread
from mcp.types import ToolAnnotations

T = TypeVar("T")

# Reads of the one cluster, Prometheus or repository the server was started with: a closed
# world (openWorldHint False), never changing anything, safe to repeat.
READ_ONLY = ToolAnnotations(
    readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False
)


async def off_loop(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """`fn(*args, **kwargs)` in a worker thread, awaited."""
    return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs))
