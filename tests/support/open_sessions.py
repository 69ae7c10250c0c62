"""MCP sessions held open for a whole synchronous test, such as a hypothesis property that makes
hundreds of calls: each server is connected over the in-memory transport (the one in-process
agents use) inside one event loop on a thread of its own (anyio's blocking portal), and `call`
runs one tool call there and waits for it. One session per server instead of one per call keeps
a call at the cost of the call itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import ClientSession
from mcp.server.fastmcp import FastMCP
from mcp.shared.memory import create_connected_server_and_client_session
from mcp.types import CallToolResult, TextContent, Tool


@dataclass(frozen=True)
class Result:
    """One call's answer as the client got it."""

    error: bool
    text: str  # the text content blocks, joined
    structured: dict[str, Any] | None

    @property
    def everything(self) -> str:
        """All the client received, for "this never appears anywhere" checks."""
        structured = json.dumps(self.structured, ensure_ascii=False) if self.structured else ""
        return f"{self.text}\n{structured}"


class OpenSessions:
    def __init__(self, portal: BlockingPortal, sessions: Mapping[str, ClientSession]) -> None:
        self._portal = portal
        self._sessions = sessions

    def tools(self, server: str) -> list[Tool]:
        return self._portal.call(self._sessions[server].list_tools).tools

    def call(self, server: str, tool: str, arguments: dict[str, Any]) -> Result:
        answer: CallToolResult = self._portal.call(
            self._sessions[server].call_tool, tool, arguments
        )
        text = "\n".join(c.text for c in answer.content if isinstance(c, TextContent))
        return Result(bool(answer.isError), text, answer.structuredContent)


@contextmanager
def open_sessions(servers: Mapping[str, FastMCP]) -> Iterator[OpenSessions]:
    """A session with each of `servers` (by name) until the block ends."""
    with start_blocking_portal() as portal, ExitStack() as stack:
        sessions = {
            name: stack.enter_context(
                portal.wrap_async_context_manager(create_connected_server_and_client_session(mcp))
            )
            for name, mcp in servers.items()
        }
        yield OpenSessions(portal, sessions)
