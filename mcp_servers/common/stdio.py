"""MCP over stdio on the event loop itself, without a thread hop per message.

The MCP SDK's stdio transport reads and writes through `anyio.wrap_file`, a worker-thread round
trip for every line read and two for every answer; on a `get` that is 0.4 ms of a 2 ms call
(measured with the official client). Here stdin and stdout are asyncio pipes, so a message is
parsed and answered without leaving the loop. Same framing as the SDK: one JSON-RPC message per
line, UTF-8; a line that is not a message reaches the session as the exception, as there.

Pipes are what MCP hosts give a server. When stdin or stdout is something asyncio cannot watch (a
regular file, say), `serve` falls back to the SDK's transport.

A `prelude.Handover` continues a conversation the prelude began: its `initialize` is replayed
first (the answer dropped: the host has it already), then the messages it left unanswered and the
bytes it read past them, before anything more is read from stdin.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import TYPE_CHECKING

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import types
from mcp.server.fastmcp import FastMCP
from mcp.shared.message import SessionMessage

if TYPE_CHECKING:
    from mcp_servers.common.prelude import Handover

MAX_LINE = 64 * 1024 * 1024  # one message; the SDK sets no limit, asyncio's default is 64 KiB


def serve(mcp: FastMCP, *, handover: Handover | None = None) -> None:
    """Run `mcp` over this process's stdin and stdout until stdin closes."""
    if not anyio.run(_serve, mcp, handover):
        mcp.run("stdio")


async def _serve(mcp: FastMCP, handover: Handover | None) -> bool:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE)
    if handover is not None:
        reader.feed_data(_replayed(handover))
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, sys.stdout
        )
    except ValueError:  # not a pipe, socket or character device
        return False
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    incoming_send, incoming = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    outgoing, outgoing_receive = anyio.create_memory_object_stream[SessionMessage](0)
    # FastMCP keeps its protocol server private; `run_stdio_async` drives it the same way.
    server = mcp._mcp_server
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_read, reader, incoming_send)
        tasks.start_soon(_write, writer, outgoing_receive, handover.ID if handover else None)
        await server.run(incoming, outgoing, server.create_initialization_options())
        tasks.cancel_scope.cancel()
    return True


async def _read(
    reader: asyncio.StreamReader, into: MemoryObjectSendStream[SessionMessage | Exception]
) -> None:
    async with into:
        while line := await reader.readline():
            try:
                message = types.JSONRPCMessage.model_validate_json(line)
            except Exception as exc:  # the session reports it, as with the SDK's transport
                await into.send(exc)
                continue
            await into.send(SessionMessage(message))


def _replayed(handover: Handover) -> bytes:
    first = handover.initialize
    lines = [json.dumps({**first, "id": handover.ID}).encode()] if first is not None else []
    return b"\n".join([*lines, *handover.pending, b""]) + handover.rest


async def _write(
    writer: asyncio.StreamWriter,
    source: MemoryObjectReceiveStream[SessionMessage],
    replayed: str | None,
) -> None:
    async with source:
        async for sent in source:
            if replayed is not None and getattr(sent.message.root, "id", None) == replayed:
                continue  # the replayed initialize's answer: the host has it from the prelude
            text = sent.message.model_dump_json(by_alias=True, exclude_none=True)
            writer.write(text.encode() + b"\n")
            await writer.drain()
