"""Answering an MCP host's first questions before the server is even imported.

An MCP host starts a stdio server at launch (and often per session), sends `initialize`, then
`tools/list`, and calls a tool only later, if at all. Importing the MCP SDK, pydantic and a
server's engines takes most of a second; the answers to those two questions never change for a
given build of the code and the same settings. So the first start records them (a manifest,
under the user's cache directory, keyed by the settings and by the size and time of every source
file that could change them), and every later start answers them from that manifest with
nothing but this module, `json` and `os` loaded, while a thread imports and builds the real
server. The first message the manifest cannot answer (a tool call, anything else) hands the
conversation over: the real server is given the host's `initialize` again (its answer, which
the host already has, is dropped), then every message from there on, so it is the same session
the host believes it opened.

A manifest that cannot be read or written (no cache directory, a read-only home) only means a
start without this shortcut.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat as stat_module
import sys
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server.fastmcp import FastMCP

SOURCES = ("core", "mcp_servers")  # packages whose code shapes what a server lists
CACHE_ENV = "KUBECREW_MCP_CACHE"  # where manifests live; "off": never use one
KEPT = 32  # manifests kept, the newest: one per server and settings a host starts


class Handover:
    """What the prelude read before the real server took over: the host's `initialize`, the
    messages it did not answer (in order), and bytes of stdin read past them. The transport
    replays `initialize` under `ID` and drops the answer to it."""

    ID = "kubecrew-prelude-initialize"

    def __init__(self) -> None:
        self.initialize: dict[str, Any] | None = None
        self.pending: list[bytes] = []
        self.rest = b""


def take_over(
    path: str | None, build: Callable[[], FastMCP]
) -> tuple[FastMCP | None, Handover] | None:
    """Answer from the manifest at `path` while `build` makes the real server in a thread, until
    a message needs that server: then it and what to replay to it (`stdio.serve`'s handover).
    None when there is no manifest (nothing was read); no server when the host went away."""
    manifest = _load(path) if _piped() else None
    if manifest is None:
        return None
    built: list[FastMCP] = []
    failed: list[BaseException] = []

    def warm() -> None:
        try:
            built.append(build())
        except BaseException as exc:  # shown when the real server is needed
            failed.append(exc)

    builder = threading.Thread(target=warm, name="mcp-build", daemon=True)
    handover = _answer(manifest, start=builder.start)
    if handover is None:  # stdin closed before anything else was asked
        return None, Handover()
    if not builder.is_alive() and not built and not failed:
        builder.start()
    builder.join()
    if failed:
        raise failed[0]
    return built[0], handover


def record(path: str | None, server: FastMCP) -> None:
    """Record at `path` what `server` answers to initialize and tools/list, for later starts."""
    if _piped():
        _save(path, server)


def _piped() -> bool:
    """Whether stdin is a pipe or socket, as hosts give (a file is served the plain way)."""
    mode = os.fstat(0).st_mode
    return stat_module.S_ISFIFO(mode) or stat_module.S_ISSOCK(mode)


# -- the answers from the manifest ----------------------------------------------------------


def _answer(manifest: dict[str, Any], *, start: Callable[[], None]) -> Handover | None:
    """Answer `initialize`, `ping` and `tools/list` from `manifest` until another message comes
    (the handover) or stdin closes (None). `start` is called once tools were listed, so the
    real server is built while the host is busy with what it was told."""
    handover = Handover()
    buffer = b""
    started = False
    while True:
        while b"\n" not in buffer:
            chunk = os.read(0, 65536)
            if not chunk:
                return None
            buffer += chunk
        line, buffer = buffer.split(b"\n", 1)
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        method = message.get("method") if isinstance(message, dict) else None
        if method == "initialize" and handover.initialize is None:
            handover.initialize = message
            _reply(message, _initialized(manifest, message))
        elif method == "notifications/initialized":
            continue
        elif method == "ping" and "id" in message:
            _reply(message, {})
        elif method == "tools/list" and handover.initialize is not None:
            _reply(message, manifest["tools"])
            if not started:
                start()
                started = True
        else:
            handover.pending.append(line)
            handover.rest = buffer
            return handover


def _initialized(manifest: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    asked = (request.get("params") or {}).get("protocolVersion")
    agreed = asked if asked in manifest["versions"] else manifest["latest"]
    return {**manifest["initialize"], "protocolVersion": agreed}


def _reply(request: dict[str, Any], result: dict[str, Any]) -> None:
    answer = {"jsonrpc": "2.0", "id": request["id"], "result": result}
    os.write(1, json.dumps(answer, separators=(",", ":")).encode() + b"\n")


# -- manifests ------------------------------------------------------------------------------


def manifest_for(name: str, argv: list[str], environ: Mapping[str, str] = os.environ) -> str | None:
    """Where the manifest of server `name` started with `argv` is (None: manifests are off):
    one per argument list, environment the servers read, Python, and build of the code."""
    where = environ.get(CACHE_ENV) or os.path.join(
        environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "kubecrew",
        "mcp",
    )
    if where == "off":
        return None
    seen = {k: v for k, v in environ.items() if k.startswith(("KUBECREW_", "KUBECONFIG"))}
    digest = hashlib.sha256(json.dumps([name, argv, seen, sys.version]).encode())
    for root in _roots():
        for folder, _, files in os.walk(root):
            for file in sorted(f for f in files if f.endswith(".py")):
                stat = os.stat(os.path.join(folder, file))
                digest.update(f"{folder}/{file}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return os.path.join(where, f"{name}-{digest.hexdigest()[:32]}.json")


def _roots() -> list[str]:
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    found = [os.path.join(here, package) for package in SOURCES]
    import importlib.util

    spec = importlib.util.find_spec("mcp")  # finds, does not import
    if spec is not None and spec.submodule_search_locations:
        found.append(next(iter(spec.submodule_search_locations)))
    return found


def _load(path: str | None) -> dict[str, Any] | None:
    if path is None:
        return None
    try:
        with open(path, "rb") as file:
            manifest = json.loads(file.read())
    except (OSError, ValueError):
        return None
    wanted = ("initialize", "tools", "versions", "latest")
    return manifest if isinstance(manifest, dict) and all(k in manifest for k in wanted) else None


def _save(path: str | None, server: FastMCP) -> None:
    if path is None:
        return
    import anyio
    from mcp import types
    from mcp.shared.version import SUPPORTED_PROTOCOL_VERSIONS

    options = server._mcp_server.create_initialization_options()
    tools = anyio.run(server.list_tools)
    result = types.InitializeResult(
        protocolVersion=types.LATEST_PROTOCOL_VERSION,
        capabilities=options.capabilities,
        serverInfo=types.Implementation(
            name=options.server_name,
            version=options.server_version,
            websiteUrl=options.website_url,
            icons=options.icons,
        ),
        instructions=options.instructions,
    )
    dump = {"by_alias": True, "exclude_none": True, "mode": "json"}
    manifest = {
        "initialize": result.model_dump(**dump),  # type: ignore[arg-type]
        "tools": types.ListToolsResult(tools=tools).model_dump(**dump),  # type: ignore[arg-type]
        "versions": list(SUPPORTED_PROTOCOL_VERSIONS),
        "latest": types.LATEST_PROTOCOL_VERSION,
    }
    from pathlib import Path

    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(manifest))
        partial.replace(target)
        kept = sorted(target.parent.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in kept[KEPT:]:
            old.unlink(missing_ok=True)
    except OSError:
        return  # no cache: every start builds first, as without a manifest
