"""Calling the metrics server's tools through the real MCP client (in-memory transport)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import anyio
from mcp.shared.memory import create_connected_server_and_client_session
from mcp.types import TextContent, Tool

from mcp_servers.metrics.server import build
from mcp_servers.metrics.settings import MetricsSettings


@dataclass(frozen=True)
class Answer:
    error: bool
    data: dict[str, Any]
    text: str


def call(settings: MetricsSettings, tool: str, **arguments: Any) -> Answer:
    """One tool call on a fresh session over the in-memory transport."""

    async def go() -> Answer:
        async with create_connected_server_and_client_session(build(settings)) as session:
            result = await session.call_tool(tool, arguments)
        text = "".join(c.text for c in result.content if isinstance(c, TextContent))
        data = result.structuredContent
        if data is None and not result.isError:
            data = json.loads(text)
        return Answer(bool(result.isError), data or {}, text)

    return anyio.run(go)


def tools(settings: MetricsSettings) -> list[Tool]:
    async def go() -> list[Tool]:
        async with create_connected_server_and_client_session(build(settings)) as session:
            return (await session.list_tools()).tools

    return anyio.run(go)
