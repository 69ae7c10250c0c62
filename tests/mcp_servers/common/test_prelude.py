"""The stdio prelude (mcp_servers/common/prelude.py) with the official MCP client: a first start
records the manifest, a later one answers initialize and tools/list from it and hands the same
session to the real server for the first call, whatever comes first; a bad manifest only means
a plain start."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from mcp_servers.common.prelude import CACHE_ENV
from sandbox.server import Sandbox
from tests.support.mcp_hosts import KUBECREW, child_env, run, stdio_session

MARK = "(answered from the manifest)"


PYTHON_M = [sys.executable, "-m", "mcp_servers.kube"]
CLI = [KUBECREW, "mcp", "kube"]  # the same start, without loading the command line


def session_run(
    sandbox: Sandbox, tmp_path: Path, cache: Path, steps: Any, start: list[str] = PYTHON_M
) -> Any:
    async def go() -> Any:
        env = child_env(**{CACHE_ENV: str(cache)})
        command = [*start, "--kubeconfig", str(sandbox.kubeconfig), "--read-only"]
        async with stdio_session(command, tmp_path / "server.log", env) as session:
            return await steps(session)

    return run(go)


async def nodes(session: ClientSession) -> list[str]:
    answer = await session.call_tool("list_resources", {"kind": "nodes"})
    assert not answer.isError, answer.content
    return [row["name"] for row in (answer.structuredContent or {})["items"]]


async def tools_then_nodes(session: ClientSession) -> tuple[dict[str, str], list[str]]:
    listed = (await session.list_tools()).tools
    return {t.name: t.description or "" for t in listed}, await nodes(session)


def only_manifest(cache: Path) -> Path:
    found = list(cache.glob("kube-*.json"))
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize("start", [PYTHON_M, CLI], ids=["python-m", "kubecrew"])
def test_a_later_start_lists_from_the_manifest_and_hands_the_session_over(
    shared_sandbox: Sandbox, tmp_path: Path, start: list[str]
) -> None:
    cache = tmp_path / "cache"
    cold_tools, cold_nodes = session_run(shared_sandbox, tmp_path, cache, tools_then_nodes, start)
    manifest = only_manifest(cache)
    recorded = json.loads(manifest.read_text())
    recorded["tools"]["tools"][0]["description"] += MARK  # only the manifest could say this
    manifest.write_text(json.dumps(recorded))
    warm_tools, warm_nodes = session_run(shared_sandbox, tmp_path, cache, tools_then_nodes, start)
    first = recorded["tools"]["tools"][0]["name"]
    assert warm_tools[first] == cold_tools[first] + MARK
    assert set(warm_tools) == set(cold_tools)
    assert warm_nodes == cold_nodes and len(warm_nodes) == 3  # the real server answered
    assert "list_resources" in warm_tools and "apply" not in warm_tools  # --read-only's list


def test_a_call_before_any_list_is_handed_over_too(shared_sandbox: Sandbox, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    session_run(shared_sandbox, tmp_path, cache, tools_then_nodes)  # records the manifest
    assert len(session_run(shared_sandbox, tmp_path, cache, nodes)) == 3


def test_a_garbled_manifest_means_a_plain_start_that_writes_a_good_one(
    shared_sandbox: Sandbox, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    session_run(shared_sandbox, tmp_path, cache, tools_then_nodes)
    manifest = only_manifest(cache)
    manifest.write_text("{not json")
    tools, found = session_run(shared_sandbox, tmp_path, cache, tools_then_nodes)
    assert "list_resources" in tools and len(found) == 3
    assert "list_resources" in manifest.read_text()
