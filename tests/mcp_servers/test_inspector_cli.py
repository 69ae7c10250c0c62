"""The MCP Inspector CLI, an external MCP client written in Node, lists and calls the kube tools.

`make install` installs the inspector from package-lock.json (`npm ci`) into node_modules/. The
test runs it as a host would, in CLI mode over stdio, against `python -m mcp_servers.kube` on a
sandbox, and reads its JSON output. Skipped only on a developer machine without node_modules (or
node); in CI (`CI` set) a missing inspector fails the test instead of hiding it.

CLI mode must stay local: it starts no web UI (ports 6274/6277), opens no browser and reaches
no network beyond the server it spawns. Fake browser openers (first on PATH and as $BROWSER)
record any attempt; under strace, the pinned version's CLI mode runs only node and the server.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.memory import create_connected_server_and_client_session

from mcp_servers.kube.server import build
from mcp_servers.kube.settings import KubeSettings
from sandbox.server import Sandbox

ROOT = Path(__file__).resolve().parents[2]
INSPECTOR = ROOT / "node_modules" / ".bin" / "mcp-inspector"
NODES = {"node-1", "node-2", "node-3"}

_missing = not INSPECTOR.exists() or shutil.which("node") is None
pytestmark = pytest.mark.skipif(
    _missing and not os.environ.get("CI"),
    reason="no node_modules/.bin/mcp-inspector (or no node); `make install` installs it "
    "with npm (required in CI)",
)


def inspector(sandbox: Sandbox, tmp_path: Path, *method: str) -> Any:
    """Run the inspector CLI on the kube server over stdio; its parsed JSON output."""
    assert INSPECTOR.exists(), "node_modules/.bin/mcp-inspector is missing: run `make install`"
    fake_bin = tmp_path / "fake-bin"
    fake_bin.mkdir(exist_ok=True)
    opened = tmp_path / "browser-opened"
    for opener in ("xdg-open", "open", "sensible-browser", "x-www-browser"):
        script = fake_bin / opener
        script.write_text(f'#!/bin/sh\necho "$0 $*" >> {opened}\n')
        script.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{fake_bin}{os.pathsep}{os.environ.get('PATH', '')}",
        "BROWSER": str(fake_bin / "xdg-open"),
        "DISPLAY": ":0",
    }
    server = [sys.executable, "-m", "mcp_servers.kube", "--kubeconfig", str(sandbox.kubeconfig)]
    done = subprocess.run(
        [str(INSPECTOR), "--cli", *server, *method],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert done.returncode == 0, f"inspector failed:\n{done.stdout}\n{done.stderr}"
    assert not opened.exists(), f"the inspector tried to open a browser: {opened.read_text()}"
    assert "localhost:6274" not in done.stdout + done.stderr  # the web UI never started
    return json.loads(done.stdout)


def tools_seen_by_the_python_client(sandbox: Sandbox) -> set[str]:
    async def go() -> set[str]:
        server = build(KubeSettings(kubeconfig=sandbox.kubeconfig))
        async with create_connected_server_and_client_session(server) as session:
            return {tool.name for tool in (await session.list_tools()).tools}

    return anyio.run(go)


def test_inspector_cli_lists_every_kube_tool(sandbox: Sandbox, tmp_path: Path) -> None:
    listed = inspector(sandbox, tmp_path, "--method", "tools/list")
    names = {tool["name"] for tool in listed["tools"]}
    assert {"list_resources", "describe", "diagnose", "apply", "scale", "cordon"} <= names
    assert names == tools_seen_by_the_python_client(sandbox)
    by_name = {tool["name"]: tool for tool in listed["tools"]}
    schema = by_name["list_resources"]["inputSchema"]
    assert schema["type"] == "object"
    assert "kind" in schema["required"]


def test_inspector_cli_calls_list_resources_and_gets_the_three_nodes(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    method = ["--method", "tools/call", "--tool-name", "list_resources"]
    answer = inspector(sandbox, tmp_path, *method, "--tool-arg", "kind=nodes")
    assert answer["isError"] is False
    data = answer["structuredContent"]
    assert data["kind"] == "Node"
    assert data["total"] == 3
    assert {item["name"] for item in data["items"]} == NODES
    assert all(item["status"] == "Ready" for item in data["items"])
    text = "".join(block["text"] for block in answer["content"] if block["type"] == "text")
    assert json.loads(text) == data
