"""An agent's tools: the MCP servers' tools, loaded through langchain-mcp-adapters, filtered to
the agent's role, and the one path every call takes.

By default each server runs in-process: built with its own `build(settings)` and connected
through the MCP SDK's in-memory transport, so an agent speaks real MCP (schemas, isError results,
structured content) without a subprocess. A server named in `Servers.remote` is reached over
stdio or streamable HTTP instead (langchain-mcp-adapters connection dicts), exactly as an external
host reaches it. Either way the tools are LangChain tools from `load_mcp_tools`.

`Toolbox.run` is the single door: the model planner's tool calls and the deterministic planner's
calls (`Toolbox.call`) both go through it, so both brains share the exact tool path, the role's
allow-list, and the record of calls (`calls`, which tests read to prove what was and was not
called, and which the CLI shows as progress). A tool outside the allow-list is never loaded, and a
call naming one is refused here before any server sees it. Being the one door, it is also where
every call is measured (`core.telemetry.tool_call`: an `execute_tool` span and the
`kubecrew_tool_calls_total` / `..._duration_seconds` metrics, by server and tool).
"""

from __future__ import annotations

import itertools
import json
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from langchain_core.messages import ToolCall, ToolMessage
from langchain_core.tools import BaseTool
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.sessions import Connection
from langchain_mcp_adapters.tools import load_mcp_tools
from mcp import ClientSession
from mcp.server.fastmcp import FastMCP
from mcp.shared.memory import create_connected_server_and_client_session

from agents.runtime.errors import ToolFailed, ToolNotAllowed
from agents.runtime.identity import kube_for
from agents.runtime.roles import Role
from core import telemetry
from mcp_servers.kube.settings import KubeSettings
from mcp_servers.metrics.settings import MetricsSettings

if TYPE_CHECKING:
    from core.policy.settings import PolicySettings
    from mcp_servers.gitops.settings import GitopsSettings

Json = dict[str, Any]
OnCall = Callable[[str, Json], None]
KEPT_CALLS = 1000


@dataclass(frozen=True)
class Servers:
    """Which MCP servers an agent gets, and how each is reached. A server left None is absent
    (its tools simply are not offered); a name in `remote` replaces the in-process server."""

    kube: KubeSettings | None = None
    metrics: MetricsSettings | None = None
    gitops: GitopsSettings | None = None
    policy: PolicySettings | None = None
    remote: Mapping[str, Connection] = field(default_factory=dict)


@dataclass(frozen=True)
class CallRecord:
    tool: str
    arguments: Json
    error: str | None  # the tool's error message, or None when it answered


class Toolbox:
    def __init__(
        self,
        role: Role,
        tools: list[BaseTool],
        *,
        on_call: OnCall | None = None,
        servers: Mapping[str, str] | None = None,
    ):
        self.role = role
        self.tools = {tool.name: tool for tool in tools if tool.name in role.tools}
        self.servers = dict(servers or {})  # tool name -> the server it came from
        # The latest calls, for tests and progress: bounded, as a watcher runs for weeks.
        self.calls: deque[CallRecord] = deque(maxlen=KEPT_CALLS)
        self._on_call = on_call
        self._ids = itertools.count(1)

    def has(self, name: str) -> bool:
        return name in self.tools

    def takes(self, name: str, argument: str) -> bool:
        """Whether tool `name` is loaded and has a parameter `argument` ("context")."""
        tool = self.tools.get(name)
        return tool is not None and argument in tool.args

    def count(self, name: str | None = None) -> int:
        return sum(1 for c in self.calls if name is None or c.tool == name)

    async def run(self, call: ToolCall) -> ToolMessage:
        """One tool call as the model makes it; the answer (or the error) as a ToolMessage."""
        name, arguments, call_id = call["name"], dict(call["args"]), call.get("id") or ""
        tool = self.tools.get(name)
        if self._on_call is not None:
            self._on_call(name, arguments)
        server = self.servers.get(name, "none")
        with telemetry.tool_call(server, name, call_id=call_id, agent=self.role.name) as measured:
            if tool is None:
                refused = ToolNotAllowed(name, self.role.name).message
                measured.outcome = "refused"
                telemetry.safeguard_refused("allow_list", refused)
                self.calls.append(CallRecord(name, arguments, refused))
                return ToolMessage(refused, tool_call_id=call_id, name=name, status="error")
            message = await tool.ainvoke({**call, "type": "tool_call", "id": call_id})
            if not isinstance(message, ToolMessage):  # content_and_artifact tools always do
                raise TypeError(f"tool {name} answered {type(message).__name__}, not a ToolMessage")
            error = text_of(message) if message.status == "error" else None
            if error is not None:
                measured.outcome = "error"
        self.calls.append(CallRecord(name, arguments, error))
        return message

    async def call(self, name: str, /, **arguments: Any) -> Json:
        """A tool's JSON answer, or ToolFailed / ToolNotAllowed with the server's message."""
        if name not in self.tools:
            raise ToolNotAllowed(name, self.role.name)
        call = ToolCall(name=name, args=arguments, id=f"planner-{next(self._ids)}")
        message = await self.run(call)
        if message.status == "error":
            raise ToolFailed(name, text_of(message))
        return result_of(message)


def text_of(message: ToolMessage) -> str:
    if isinstance(message.content, str):
        return message.content
    return "".join(
        block.get("text", "") if isinstance(block, dict) else str(block)
        for block in message.content
    )


def result_of(message: ToolMessage) -> Json:
    """The structured answer of a tool: its structuredContent, else its text read as JSON."""
    artifact = message.artifact
    if isinstance(artifact, dict) and isinstance(artifact.get("structured_content"), dict):
        return dict(artifact["structured_content"])
    text = text_of(message)
    try:
        value = json.loads(text)
    except ValueError:
        return {"text": text}
    return value if isinstance(value, dict) else {"result": value}


@asynccontextmanager
async def open_toolbox(
    role: Role, servers: Servers, *, on_call: OnCall | None = None
) -> AsyncIterator[Toolbox]:
    """Sessions to every configured server, open for as long as the block runs. The kube
    server speaks as the agent's own ServiceAccount when one is installed (`identity`)."""
    own = replace(servers, kube=kube_for(role.name, servers.kube))
    async with AsyncExitStack() as stack:
        tools: list[BaseTool] = []
        servers_of: dict[str, str] = {}
        for name, session in await _sessions(own, stack):
            loaded = await load_mcp_tools(session, server_name=name)
            tools.extend(loaded)
            servers_of.update((tool.name, name) for tool in loaded)
        yield Toolbox(role, tools, on_call=on_call, servers=servers_of)


async def _sessions(servers: Servers, stack: AsyncExitStack) -> list[tuple[str, ClientSession]]:
    sessions = []
    if servers.remote:
        client = MultiServerMCPClient(dict(servers.remote))
        for name in servers.remote:
            sessions.append((name, await stack.enter_async_context(client.session(name))))
    for name, server in _in_process(servers):
        if name not in servers.remote:
            opened = create_connected_server_and_client_session(server)
            sessions.append((name, await stack.enter_async_context(opened)))
    return sessions


def _in_process(servers: Servers) -> list[tuple[str, FastMCP]]:
    """Each configured server, built as its own entry point builds it (imported only when
    configured: the gitops and policy servers bring git and CEL with them)."""
    built: list[tuple[str, FastMCP]] = []
    if servers.kube is not None and "kube" not in servers.remote:
        from mcp_servers.kube.server import build as build_kube

        built.append(("kube", build_kube(servers.kube)))
    if servers.metrics is not None and "metrics" not in servers.remote:
        from mcp_servers.metrics.server import build as build_metrics

        built.append(("metrics", build_metrics(servers.metrics)))
    if servers.gitops is not None and "gitops" not in servers.remote:
        from mcp_servers.gitops.server import build as build_gitops

        built.append(("gitops", build_gitops(servers.gitops)))
    if servers.policy is not None and "policy" not in servers.remote:
        from mcp_servers.policy.server import build as build_policy

        built.append(("policy", build_policy(servers.policy)))
    return built
