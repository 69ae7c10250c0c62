"""What every server's tool layer shares: how a server is made, the read-only annotation, and
getting the blocking engine off the event loop.

Every server is made by `new_server`, whose tool calls each run under `secret_values.watching`:
what the call returns, and the text of any error it raises (ours, the API server's, git's),
leaves with every value of every Secret the call touched scrubbed out. It is the one output seam
of every tool of every server, so a new tool is covered without knowing it. Otherwise it differs
from a plain FastMCP in two measured ways:
- It logs warnings only. FastMCP's default writes one rich-rendered INFO line per request to
  stderr, which is the host's log and, on a `get`, costs as much as the request itself.
- A tool is described once per process: each build of a server registers new closures, but
  the schema FastMCP derives from a function's signature (a pydantic model and its JSON
  schema, 6 ms a tool) is the same for every closure of one function with the same defaults,
  so it is made for the first and copied for the rest (the in-process servers of the evals and
  the tests are built hundreds of times).
- A tool returning a plain dict lists no output schema. FastMCP would list
  `{"type": "object", "additionalProperties": true}`, which tells a client nothing, yet makes
  both ends re-check every answer against it with jsonschema (0.85 ms a call together, more than
  the cluster read of a `get`). The answer is still sent as structuredContent and as JSON text.

The engines are plain blocking Python (the Kubernetes client, httpx, GitPython); a tool that
waits on them in the event loop would stall every other request of an HTTP transport, so async
tools hand the work to a worker thread with `off_loop`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from importlib import metadata
from typing import Any, TypeVar

import anyio.to_thread
from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.server.fastmcp.tools import Tool as RegisteredTool
from mcp.types import ContentBlock, Icon, Tool, ToolAnnotations
from pydantic import ValidationError

from core.connection import WouldWait, no_waiting
from mcp_servers.common import secret_values


def _installed_version() -> str:
    try:
        return metadata.version("kubecrew")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "0+unknown"


T = TypeVar("T")
VERSION = _installed_version()

# Reads of the one cluster, Prometheus or repository the server was started with: a closed
# world (openWorldHint False), never changing anything, safe to repeat.
READ_ONLY = ToolAnnotations(
    readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False
)

_SAYS_NOTHING = {"type", "title", "additionalProperties"}
_DESCRIBED: dict[tuple[object, ...], RegisteredTool] = {}  # see `_Server.add_tool`
DESCRIBED_KEPT = 2048


async def off_loop(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """`fn(*args, **kwargs)` in a worker thread, awaited."""
    return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs))


async def cached_or_off_loop(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """A read that caches may answer whole: on the event loop, without the two thread hops
    (a tenth of a millisecond) when every answer it needs is cached; from the first request it
    would send, again in a worker thread. Only for reads: the inline try is thrown away."""
    try:
        with no_waiting():
            return fn(*args, **kwargs)
    except WouldWait:
        return await off_loop(fn, *args, **kwargs)


def new_server(
    name: str,
    instructions: str | None = None,
    lifespan: Callable[[FastMCP], AbstractAsyncContextManager[None]] | None = None,
) -> FastMCP:
    """A FastMCP server named `name` that logs warnings only and lists only telling schemas;
    its `serverInfo.version` is kubecrew's, not the MCP SDK's."""
    server = _Server(name, instructions=instructions, lifespan=lifespan, log_level="WARNING")
    server._mcp_server.version = VERSION
    return server


class _Server(FastMCP):
    def add_tool(
        self,
        fn: Callable[..., Any],
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
        structured_output: bool | None = None,
    ) -> None:
        args = (fn, name, title, description, annotations, icons, meta, structured_output)
        named = name or fn.__name__
        if self._tool_manager.get_tool(named) is not None:  # FastMCP's way: warn, keep the first
            super().add_tool(*args)
            return
        key = (
            fn.__code__,
            repr(fn.__defaults__),
            repr(fn.__kwdefaults__),
            repr(fn.__annotations__),  # a closure's may be made from its cells
            fn.__doc__,
            named,
            title,
            description,
            annotations.model_dump_json() if annotations else None,
            repr(icons),
            repr(meta),
            structured_output,
        )
        described = _DESCRIBED.get(key)
        if described is None:
            super().add_tool(*args)
            if len(_DESCRIBED) >= DESCRIBED_KEPT:
                _DESCRIBED.clear()
            _DESCRIBED[key] = self._tool_manager._tools[named]
        else:
            self._tool_manager._tools[named] = described.model_copy(update={"fn": fn})

    async def call_tool(
        self, name: str, arguments: dict[str, Any]
    ) -> Sequence[ContentBlock] | dict[str, Any]:
        with secret_values.watching() as touched:
            try:
                result = await super().call_tool(name, arguments)
            except Exception as exc:
                if isinstance(exc.__cause__, ValidationError):
                    raise ToolError(_arguments_problem(name, exc.__cause__)) from None
                message = str(exc)
                scrubbed = touched.scrub(message)
                if scrubbed == message:
                    raise
                # Not chained: the original, value and all, must not reach a log either.
                raise ToolError(scrubbed) from None
            return touched.scrub(result)

    async def list_tools(self) -> list[Tool]:
        return [
            tool.model_copy(update={"outputSchema": None}) if _says_nothing(tool) else tool
            for tool in await super().list_tools()
        ]


def _arguments_problem(tool: str, error: ValidationError) -> str:
    """Bad tool arguments in a line a caller can act on: which argument, what was wrong, never
    the value given (it may be a Secret's) nor pydantic's links."""
    problems = []
    for each in error.errors(include_url=False, include_input=False):
        where = ".".join(str(part) for part in each["loc"]) or "the arguments"
        what = (
            "is required"
            if each["type"] == "missing"
            else each["msg"][:1].lower() + each["msg"][1:]
        )
        problems.append(f"{where}: {what}")
    return f"{tool}: bad arguments: " + "; ".join(problems) + " (list_tools shows the schema)"


def _says_nothing(tool: Tool) -> bool:
    """The output schema FastMCP derives from `-> dict[str, Any]`: any object at all."""
    schema = tool.outputSchema
    return (
        schema is not None
        and set(schema) <= _SAYS_NOTHING
        and schema.get("type") == "object"
        and schema.get("additionalProperties", True) is True
    )
