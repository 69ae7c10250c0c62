"""The kube server over its real transports: streamable HTTP (bearer token), stdio, LangChain.

Each HTTP server runs in its own process, started as a host would (`python -m mcp_servers.kube`
or `kubecrew mcp kube`), on a free loopback port, and is stopped by the test. Clients are the
official MCP client and `langchain_mcp_adapters`; 401s are checked with plain httpx, as any HTTP
client would meet them.
"""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from langchain_mcp_adapters.client import MultiServerMCPClient
from mcp import ClientSession
from mcp.types import CallToolResult

from sandbox.server import Sandbox
from tests.support.mcp_hosts import (
    KUBECREW,
    child_env,
    content_json,
    free_port,
    http_server,
    http_session,
    stdio_session,
)

TOKEN = "test-token-0123456789abcdefghijklmnopqrstuvwxyz-ABCDEF"  # 32 bytes' worth
FILE_TOKEN = "from-a-file-0123456789abcdefghijklmnopqrstuvwxyz-ABC"
NODES = {"node-1", "node-2", "node-3"}


@pytest.fixture
def kube_http(sandbox: Sandbox, tmp_path: Path) -> Iterator[str]:
    """`python -m mcp_servers.kube --transport http` with the token from the environment."""
    port = free_port()
    command = [sys.executable, "-m", "mcp_servers.kube", "--kubeconfig", str(sandbox.kubeconfig)]
    command += ["--transport", "http", "--port", str(port)]
    env = child_env(KUBECREW_MCP_TOKEN=TOKEN)
    with http_server(command, port, tmp_path / "server.log", env):
        yield f"http://127.0.0.1:{port}/mcp"


def structured(result: CallToolResult) -> dict[str, Any]:
    assert not result.isError, result.content
    assert result.structuredContent is not None
    return result.structuredContent


async def list_nodes(session: ClientSession) -> tuple[set[str], set[str]]:
    tools = {tool.name for tool in (await session.list_tools()).tools}
    nodes = structured(await session.call_tool("list_resources", {"kind": "nodes"}))
    return tools, {item["name"] for item in nodes["items"]}


def over_http(url: str, token: str) -> tuple[set[str], set[str]]:
    async def go() -> tuple[set[str], set[str]]:
        async with http_session(url, token) as session:
            return await list_nodes(session)

    return anyio.run(go)


def test_http_client_with_the_token_lists_and_calls_kube_tools(kube_http: str) -> None:
    tools, nodes = over_http(kube_http, TOKEN)
    assert {"list_resources", "describe", "diagnose"} <= tools
    assert nodes == NODES


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer wrong-token"}, {"Authorization": f"Basic {TOKEN}"}],
    ids=["no-token", "wrong-token", "not-bearer"],
)
def test_http_request_without_the_right_token_gets_401(
    kube_http: str, headers: dict[str, str]
) -> None:
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    accept = {"Accept": "application/json, text/event-stream"}
    response = httpx.post(kube_http, json=initialize, headers={**accept, **headers})
    assert response.status_code == 401
    assert response.json()["error"] == "unauthorized"
    assert response.headers["www-authenticate"].startswith("Bearer")


def test_generated_token_is_private_and_never_printed(sandbox: Sandbox, tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "server.log"
    command = [KUBECREW, "mcp", "kube", "--kubeconfig", str(sandbox.kubeconfig)]
    command += ["--transport", "http", "--port", str(port)]
    env = child_env(KUBECREW_HOME=str(tmp_path / "home"))
    with http_server(command, port, log, env):
        token_file = tmp_path / "home" / "mcp" / "kube.token"
        output = log.read_text()
        assert str(token_file) in output
        token = token_file.read_text().strip()
        assert len(token) >= 32
        assert token not in output
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        _, nodes = over_http(f"http://127.0.0.1:{port}/mcp", token)
    assert nodes == NODES


def test_token_file_is_used_as_the_bearer_token(sandbox: Sandbox, tmp_path: Path) -> None:
    port = free_port()
    token_file = tmp_path / "token"
    token_file.write_text(FILE_TOKEN + "\n")
    command = [KUBECREW, "mcp", "kube", "--kubeconfig", str(sandbox.kubeconfig)]
    command += ["--transport", "http", "--port", str(port), "--token-file", str(token_file)]
    with http_server(command, port, tmp_path / "server.log", child_env()):
        _, nodes = over_http(f"http://127.0.0.1:{port}/mcp", FILE_TOKEN)
    assert nodes == NODES


@pytest.mark.parametrize(
    "options",
    [
        ["--host", "0.0.0.0"],
        ["--host", "example.com"],
        ["--token-file", "/nonexistent/token"],
    ],
    ids=["any-address", "a-hostname", "missing-token-file"],
)
def test_unsafe_or_broken_http_options_are_refused_in_one_line(options: list[str]) -> None:
    command = [KUBECREW, "mcp", "kube", "--transport", "http", "--port", "1", *options]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, env=child_env())
    assert done.returncode == 1
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert "--allow-remote" in done.stderr or "token" in done.stderr


def test_python_module_refuses_a_remote_host_without_allow_remote() -> None:
    command = [sys.executable, "-m", "mcp_servers.kube", "--transport", "http"]
    command += ["--host", "0.0.0.0"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, env=child_env())
    assert done.returncode == 2
    assert "--allow-remote" in done.stderr


def stdio_command(sandbox: Sandbox) -> list[str]:
    return [KUBECREW, "mcp", "kube", "--kubeconfig", str(sandbox.kubeconfig)]


def test_stdio_via_kubecrew_mcp_kube(sandbox: Sandbox, tmp_path: Path) -> None:
    async def go() -> tuple[set[str], set[str]]:
        async with stdio_session(stdio_command(sandbox), tmp_path / "stdio.log") as session:
            return await list_nodes(session)

    tools, nodes = anyio.run(go)
    assert {"list_resources", "describe", "diagnose"} <= tools
    assert nodes == NODES


def test_stdio_starts_when_stdin_is_a_file_not_a_pipe(sandbox: Sandbox, tmp_path: Path) -> None:
    """Hosts give pipes (served on the event loop); a file on stdin takes the SDK's transport,
    which answers what it has handled before the end of the file closes the session."""
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "file", "version": "1"}}},
    ]  # fmt: skip
    requests = tmp_path / "requests.jsonl"
    requests.write_text("".join(json.dumps(m) + "\n" for m in messages))
    with requests.open() as stdin:
        done = subprocess.run(
            stdio_command(sandbox), stdin=stdin, capture_output=True, text=True, timeout=60,
            env=child_env(),
        )  # fmt: skip
    answers = {a["id"]: a for a in map(json.loads, done.stdout.splitlines())}
    assert answers[1]["result"]["serverInfo"]["name"] == "kubecrew-kube", done.stderr
    # the server's own version, not the MCP SDK's
    assert answers[1]["result"]["serverInfo"]["version"] == metadata.version("kubecrew")


def test_langchain_adapters_over_stdio_and_http(sandbox: Sandbox, kube_http: str) -> None:
    command, *args = stdio_command(sandbox)
    client = MultiServerMCPClient(
        {
            "stdio": {"transport": "stdio", "command": command, "args": args},
            "http": {
                "transport": "streamable_http",
                "url": kube_http,
                "headers": {"Authorization": f"Bearer {TOKEN}"},
            },
        },
        tool_name_prefix=True,
    )

    async def go() -> tuple[set[str], list[Any]]:
        tools = await client.get_tools()
        by_name = {tool.name: tool for tool in tools}
        answers = [
            await by_name[f"{server}_list_resources"].ainvoke({"kind": "nodes"})
            for server in ("stdio", "http")
        ]
        return set(by_name), answers

    names, answers = anyio.run(go)
    for server in ("stdio", "http"):
        assert {f"{server}_list_resources", f"{server}_describe"} <= names
    for answer in answers:
        assert {item["name"] for item in content_json(answer)["items"]} == NODES
