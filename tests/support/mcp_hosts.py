"""Reaching the crew's MCP servers the way an MCP host does: a process it starts, a session over
stdio or streamable HTTP (bearer token), the JSON a tool answered, and a table of calls run
through either the official client or LangChain tools (langchain-mcp-adapters).

Servers run as separate processes (`kubecrew mcp <name> ...` or `python -m mcp_servers.<name>`),
never in the test's process, so what is tested is what a host gets: the command line, the
transport, the protocol framing. A failed tool call raises `ToolFailed` with the server's error
text, so a test that expected success shows why it did not get it.

A table is a list of `Step`s run in order against one `World` (what the run acts on, and what
earlier answers said); the same table runs through any client, since each client is reduced to
an `Invoke` (tool name and arguments in, JSON out) plus the names of the tools it lists.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import ToolException
from langchain_mcp_adapters.callbacks import CallbackContext, Callbacks
from langchain_mcp_adapters.tools import load_mcp_tools
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import CallToolResult, TextContent

from tests.support.waiting import eventually

T = TypeVar("T")
Json = dict[str, Any]
KUBECREW = str(Path(sys.executable).with_name("kubecrew"))


class ToolFailed(AssertionError):
    """A tool answered with an error (or with no JSON) where the test expected an answer."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
    except OSError:
        return False
    return True


def child_env(**extra: str) -> dict[str, str]:
    """This environment without an inherited token, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if k != "KUBECREW_MCP_TOKEN"}
    return {**env, **extra}


@contextmanager
def http_server(
    command: list[str], port: int, log: Path, env: dict[str, str]
) -> Iterator[subprocess.Popen[bytes]]:
    """A server process listening on `port` (its output in `log`), stopped on exit."""
    with log.open("wb") as out:
        child = subprocess.Popen(command, stdout=out, stderr=out, env=env)
    try:

        def up() -> bool:
            assert child.poll() is None, f"server exited: {log.read_text()}"
            return listening(port)

        eventually(up, timeout=30, what=f"MCP server listening on {port}")
        yield child
    finally:
        child.terminate()
        try:
            child.wait(timeout=15)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


@asynccontextmanager
async def http_session(url: str, token: str) -> AsyncIterator[ClientSession]:
    """An initialized session of the official client over streamable HTTP, with the token."""
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        create_mcp_http_client(headers=headers) as client,
        streamable_http_client(url, http_client=client) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def stdio_session(
    command: list[str], errlog: Path, env: dict[str, str] | None = None
) -> AsyncIterator[ClientSession]:
    """An initialized session of the official client with `command` spawned over stdio; the
    server's stderr (its log, for a host) goes to `errlog`. `env` is the server's whole
    environment, as a host's `env` setting gives it (default: the client's safe few variables)."""
    parameters = StdioServerParameters(command=command[0], args=command[1:], env=env)
    with errlog.open("w") as log:
        async with (
            stdio_client(parameters, errlog=log) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


def run(main: Callable[[], Awaitable[T]]) -> T:
    """`anyio.run(main)`, raising a failure as itself rather than inside the exception groups of
    the client's task groups (one per transport layer), so a test's report starts with it."""
    try:
        return anyio.run(main)
    except BaseExceptionGroup as group:
        cause: BaseException = group
        while isinstance(cause, BaseExceptionGroup) and len(cause.exceptions) == 1:
            cause = cause.exceptions[0]
        if cause is group:
            raise
        raise cause.with_traceback(cause.__traceback__) from None


def answer(result: CallToolResult) -> dict[str, Any]:
    """The JSON object a tool answered: its structured content, else its JSON text."""
    text = "".join(block.text for block in result.content if isinstance(block, TextContent))
    if result.isError:
        raise ToolFailed(text)
    if result.structuredContent is not None:
        return result.structuredContent
    return _json_object(text)


def tool_message_json(message: ToolMessage) -> dict[str, Any]:
    """The JSON object in what a LangChain MCP tool returned to an agent: the structured content
    the adapter keeps as the message's artifact, else the JSON text of its content."""
    if message.status == "error":
        raise ToolFailed(str(message.content))
    artifact = message.artifact
    if isinstance(artifact, dict) and isinstance(artifact.get("structured_content"), dict):
        structured: dict[str, Any] = artifact["structured_content"]
        return structured
    return content_json(message.content)


def content_json(content: Any) -> dict[str, Any]:
    """The JSON of a LangChain tool's content, whether a string or a list of content blocks."""
    if isinstance(content, str):
        return _json_object(content)
    return _json_object("".join(block["text"] for block in content if block.get("type") == "text"))


def _json_object(text: str) -> dict[str, Any]:
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ToolFailed(f"the tool answered no JSON: {text[:500]!r}") from exc
    if not isinstance(parsed, dict):
        raise ToolFailed(f"the tool answered JSON that is not an object: {text[:500]!r}")
    return parsed


# --- a table of calls ----------------------------------------------------------------------------


@dataclass
class World:
    """What one run of a table acts on, and what its earlier calls answered."""

    namespace: str  # the run's own namespace
    saved: dict[str, Any] = field(default_factory=dict)  # e.g. a pod name, a PR number
    progress: list[str] = field(default_factory=list)  # progress messages of the current call


Arguments = Mapping[str, Any] | Callable[[World], Mapping[str, Any]]
Invoke = Callable[[str, Json], Awaitable[Json]]


@dataclass(frozen=True)
class Step:
    """One call: `tool` with `arguments` must answer JSON with `keys`, and `check` must hold.
    `save` keeps values for later steps; `settle` repeats the call until `check` holds (for a
    state the cluster reaches on its own, like a finished rollout); an error whose text holds
    `retry_on` is retried, as a host retries an error the tool calls retryable."""

    tool: str
    arguments: Arguments
    keys: tuple[str, ...]
    check: Callable[[Json, World], object] = lambda answer, world: True
    save: Callable[[Json], Mapping[str, Any]] = lambda answer: {}
    settle: bool = False
    retry_on: str = ""


def assert_covered(table_name: str, listed: set[str], table: Sequence[Step]) -> None:
    """Fail naming the listed tools the table misses and its steps for tools not listed."""
    named = {step.tool for step in table}
    problems = []
    if untested := sorted(listed - named):
        problems.append(f"tools with no Step in {table_name}: {', '.join(untested)}")
    if gone := sorted(named - listed):
        problems.append(f"Steps in {table_name} for tools the server lacks: {', '.join(gone)}")
    if problems:
        pytest.fail("; ".join(problems), pytrace=False)


async def run_table(
    table: Sequence[Step], world: World, invoke: Invoke, *, settle_seconds: float = 30
) -> None:
    for number, step in enumerate(table, 1):
        arguments = dict(step.arguments(world) if callable(step.arguments) else step.arguments)
        where = f"step {number} {step.tool}({arguments})"
        last: list[object] = ["no answer"]  # the latest answer or error, for the report
        with anyio.move_on_after(settle_seconds) as waited:
            got = await _answer_that_holds(step, arguments, world, invoke, where, last)
        if waited.cancelled_caught:
            raise AssertionError(f"{where}: not done in {settle_seconds} s; last: {last[0]}")
        world.saved.update(step.save(got))


async def _answer_that_holds(
    step: Step, arguments: Json, world: World, invoke: Invoke, where: str, last: list[object]
) -> Json:
    while True:
        world.progress.clear()
        try:
            got = await invoke(step.tool, arguments)
        except ToolFailed as exc:
            if not (step.retry_on and step.retry_on in str(exc)):
                raise ToolFailed(f"{where} failed: {exc}") from None
            last[0] = exc
            await anyio.sleep(0.3)
            continue
        last[0] = _brief(got)
        missing = [key for key in step.keys if key not in got]
        assert not missing, f"{where}: no {missing} in {_brief(got)}"
        try:
            held = step.check(got, world)
        except (KeyError, IndexError, TypeError) as exc:
            raise AssertionError(f"{where}: {exc!r} reading {_brief(got)}") from exc
        if held:
            return got
        assert step.settle, f"{where}: unexpected answer {_brief(got)}"
        await anyio.sleep(0.3)


async def official_client(session: ClientSession, world: World) -> tuple[set[str], Invoke]:
    """The tools the session lists, and calls through it that ask for progress (into `world`)."""
    listed = {tool.name for tool in (await session.list_tools()).tools}

    async def progress(progress: float, total: float | None, message: str | None) -> None:
        world.progress.append(message or "")

    async def invoke(tool: str, arguments: Json) -> Json:
        return answer(await session.call_tool(tool, arguments, progress_callback=progress))

    return listed, invoke


async def langchain_client(
    session: ClientSession, server: str, world: World
) -> tuple[set[str], Invoke]:
    """The session's tools as LangChain tools (named `<server>_<tool>`, as with several servers),
    each called as an agent calls it: a ToolCall in, a ToolMessage out. Tool errors raise
    rather than go back to a model; progress goes into `world`."""

    async def progress(
        progress: float, total: float | None, message: str | None, context: CallbackContext
    ) -> None:
        world.progress.append(message or "")

    tools = await load_mcp_tools(
        session,
        callbacks=Callbacks(on_progress=progress),
        server_name=server,
        tool_name_prefix=True,
        handle_tool_errors=False,
    )
    by_name = {tool.name.removeprefix(f"{server}_"): tool for tool in tools}

    async def invoke(tool: str, arguments: Json) -> Json:
        call = {"type": "tool_call", "id": f"call-{tool}", "name": by_name[tool].name}
        try:
            message = await by_name[tool].ainvoke({**call, "args": arguments})
        except ToolException as exc:
            raise ToolFailed(str(exc)) from exc
        assert isinstance(message, ToolMessage), message
        return tool_message_json(message)

    return set(by_name), invoke


def _brief(answer: Json) -> str:
    text = repr(answer)
    return text if len(text) < 1500 else text[:1500] + "..."
