"""Calling the kube server's tools through the real MCP client, against a sandbox.

`KubeTools` builds one server (so discovery is read once, as in production) and opens a fresh
in-memory MCP session per call; `Answer` is what one call returned. `identity_kubeconfig` makes
a kubeconfig for an identity from a token the API server issues (`kubectl create token`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import yaml
from mcp.server.fastmcp import FastMCP
from mcp.shared.memory import create_connected_server_and_client_session
from mcp.types import TextContent, Tool

from mcp_servers.kube.server import build
from mcp_servers.kube.settings import KubeSettings


@dataclass(frozen=True)
class Answer:
    error: bool
    data: dict[str, Any]
    text: str

    @property
    def everything(self) -> str:
        """All the client received, for "this never appears anywhere" checks."""
        return self.text + json.dumps(self.data)


@dataclass
class KubeTools:
    settings: KubeSettings
    server: FastMCP = field(init=False)

    def __post_init__(self) -> None:
        self.server = build(self.settings)

    def call(self, tool: str, **arguments: Any) -> Answer:
        async def go() -> Answer:
            async with create_connected_server_and_client_session(self.server) as session:
                result = await session.call_tool(tool, arguments)
            text = "".join(c.text for c in result.content if isinstance(c, TextContent))
            data = result.structuredContent
            if data is None and not result.isError:
                data = json.loads(text)
            return Answer(bool(result.isError), data or {}, text)

        return anyio.run(go)

    def ok(self, tool: str, **arguments: Any) -> dict[str, Any]:
        answer = self.call(tool, **arguments)
        assert not answer.error, answer.text
        return answer.data

    def fails(self, tool: str, **arguments: Any) -> str:
        answer = self.call(tool, **arguments)
        assert answer.error, f"{tool} {arguments} should have failed: {answer.data}"
        return answer.text

    def tools(self) -> list[Tool]:
        async def go() -> list[Tool]:
            async with create_connected_server_and_client_session(self.server) as session:
                return (await session.list_tools()).tools

        return anyio.run(go)


def identity_kubeconfig(admin: Path, token: str, target: Path) -> Path:
    """The admin kubeconfig with its user's token replaced by `token`."""
    config = yaml.safe_load(admin.read_text())
    for user in config["users"]:
        user["user"] = {"token": token}
    target.write_text(yaml.safe_dump(config))
    target.chmod(0o600)
    return target
