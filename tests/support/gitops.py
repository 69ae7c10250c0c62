"""Git run as a person runs it, and the gitops server's tools called through a real MCP client
(in-memory transport): `session(server, script)` runs `script(call)` against a server, where
`call(tool, **args)` returns the structured result or raises `ToolFailed`. The shop's
manifests the `manifests` fixture (tests/conftest.py) commits are the demo's
(kubecrew/demo/shop.py)."""

from __future__ import annotations

import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from mcp.server.fastmcp import FastMCP
from mcp.shared.memory import create_connected_server_and_client_session

from mcp_servers.gitops.settings import GitopsSettings


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def settings_for(repo: Path, kubeconfig: Path | None = None, **extra: Any) -> GitopsSettings:
    return GitopsSettings(
        repo=repo, state_dir=repo.parent / "state", kubeconfig=kubeconfig, **extra
    )


class ToolFailed(AssertionError):
    """A tool answered with an error where the test expected success."""


Call = Callable[..., Awaitable[Any]]


def session(server: FastMCP, script: Callable[[Call], Awaitable[None]]) -> None:
    """Run `script(call)` against `server` over the MCP client; `call(tool, **args)` returns the
    structured result or raises ToolFailed with the tool's error text."""

    async def main() -> None:
        async with create_connected_server_and_client_session(server) as client:

            async def call(tool: str, **args: Any) -> Any:
                result = await client.call_tool(tool, args)
                if result.isError:
                    raise ToolFailed(" ".join(getattr(c, "text", "") for c in result.content))
                return result.structuredContent

            await script(call)

    anyio.run(main)
