"""Serving a built FastMCP server over stdio or streamable HTTP, the same way for every server.

stdio is what desktop hosts spawn; streamable HTTP is for a server that outlives one host. Over
HTTP the server trusts nobody by default: it binds loopback, refuses any other address unless
`allow_remote` says so, and every request must carry `Authorization: Bearer <token>` (compared in
constant time; anything else gets a 401 JSON body). The token is read from a file or
`KUBECREW_MCP_TOKEN`; with neither, a random one is written to a 0600 file whose path (never the
token) is printed. Plain HTTP only: for remote use, TLS belongs to a reverse proxy in front.

A token someone gives must be as hard to guess as the one the server would generate: 32 random
bytes (`strong_token`). Its strength is estimated from its length and the smallest common
alphabet that spells it (digits, hex, letters and digits, base64, printable ASCII), so
`secrets.token_urlsafe(32)` (43 characters) and `openssl rand -hex 32` (64) pass, and a word, a
short string or one letter repeated is refused before anything is served, with the message
saying how to make a good one (and never repeating the token).

Knows nothing of any one server (kube, metrics, gitops): they pass their FastMCP and a name, and
their `__main__` adds the same options through `add_arguments` / `from_arguments`. Kept apart
from the servers so the security rules are written, and tested, once.
"""

from __future__ import annotations

import argparse
import hmac
import ipaddress
import math
import os
import secrets
import string
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from core.home import kubecrew_home

if TYPE_CHECKING:  # the HTTP stack is imported when HTTP is served: stdio starts without it
    from mcp.server.fastmcp import FastMCP
    from starlette.datastructures import Headers
    from starlette.types import ASGIApp, Receive, Scope, Send

TransportName = Literal["stdio", "http"]

LOOPBACK = "127.0.0.1"
DEFAULT_PORT = 8000
TOKEN_ENV = "KUBECREW_MCP_TOKEN"
TOKEN_BYTES = 32  # what a generated token holds, and the least a given one must
MAKE_TOKEN = "python -c 'import secrets; print(secrets.token_urlsafe(32))'"
# The alphabets a token is judged by, smallest first: a token earns log2(size) bits a character
# of the first one that spells it. Anything else is credited as printable ASCII.
_ALPHABETS = tuple(
    frozenset(letters)
    for letters in (
        string.digits,
        string.digits + "abcdef",
        string.digits + "ABCDEF",
        string.digits + string.ascii_lowercase,
        string.digits + string.ascii_uppercase,
        string.digits + string.ascii_letters,
        string.digits + string.ascii_letters + "-_",  # base64url: secrets.token_urlsafe
        string.digits + string.ascii_letters + "+/=",  # base64
    )
)
_PRINTABLE = 94  # ASCII from ! to ~
_DISTINCT = 8  # fewer different characters than this is a pattern, not a random token


class TransportError(Exception):
    """The transport options cannot be served as given; the message says what to change."""


@dataclass(frozen=True)
class TransportOptions:
    transport: TransportName = "stdio"
    host: str = LOOPBACK
    port: int = DEFAULT_PORT
    token_file: Path | None = None
    allow_remote: bool = False


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check(options: TransportOptions, environ: Mapping[str, str] = os.environ) -> None:
    """Refuse options that would expose the server or cannot work, before anything starts:
    among them a bearer token (file, else `$KUBECREW_MCP_TOKEN`) too weak to keep others out."""
    if options.transport == "stdio":
        return
    if not is_loopback(options.host) and not options.allow_remote:
        raise TransportError(
            f"--host {options.host} is not a loopback address; the server would be reachable "
            "from other machines: add --allow-remote if that is intended"
        )
    if not 0 < options.port < 65536:
        raise TransportError(f"--port {options.port} is not a TCP port (1-65535)")
    if options.token_file is not None:
        _read_token(options.token_file)
    else:
        _env_token(environ)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("transport")
    group.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    group.add_argument("--host", default=LOOPBACK, help="http: address to bind (loopback)")
    group.add_argument("--port", type=int, default=DEFAULT_PORT, help="http: TCP port")
    group.add_argument(
        "--token-file",
        type=Path,
        help=f"http: file holding the bearer token (else ${TOKEN_ENV}, else one is generated)",
    )
    group.add_argument(
        "--allow-remote", action="store_true", help="http: allow a non-loopback --host"
    )


def from_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> TransportOptions:
    """The options `add_arguments` parsed, checked; a refusal ends the program via the parser."""
    options = TransportOptions(
        transport=args.transport,
        host=args.host,
        port=args.port,
        token_file=args.token_file,
        allow_remote=args.allow_remote,
    )
    try:
        check(options)
    except TransportError as exc:
        parser.error(str(exc))
    return options


def serve_recording(
    build: Callable[[], FastMCP],
    manifest: str | None,
    options: TransportOptions,
    *,
    name: str,
    environ: Mapping[str, str] = os.environ,
) -> None:
    """`serve` the server `build` makes; over stdio, first record at `manifest` what it answers
    to `initialize` and `tools/list`, so later starts answer them at once (`prelude`)."""
    check(options, environ)
    if options.transport != "stdio" or manifest is None:
        serve(build(), options, name=name, environ=environ)
        return
    from mcp_servers.common import prelude, stdio

    server = build()
    prelude.record(manifest, server)
    stdio.serve(server)


def serve(
    mcp: FastMCP,
    options: TransportOptions,
    *,
    name: str,
    environ: Mapping[str, str] = os.environ,
) -> None:
    """Serve until stopped (stdin closes, or SIGINT/SIGTERM for HTTP)."""
    # Imported here: the MCP server stack takes half a second to import, and `kubecrew --help`
    # imports this module for its option defaults.
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    from mcp_servers.common import stdio

    check(options, environ)
    if options.transport == "stdio":
        stdio.serve(mcp)
        return
    token = bearer_token(options, name=name, environ=environ)
    if not is_loopback(options.host):
        # FastMCP's Host-header check only knows loopback names. Off loopback the bearer token
        # is the defence against DNS rebinding (a browser page cannot learn it).
        mcp.settings.transport_security = TransportSecuritySettings(
            enable_dns_rebinding_protection=False
        )
        _say("serving plain HTTP off loopback: put a TLS reverse proxy in front")
    app = BearerAuth(mcp.streamable_http_app(), token)
    url = f"http://{_url_host(options.host)}:{options.port}{mcp.settings.streamable_http_path}"
    _say(f"{mcp.name} MCP server (streamable HTTP) on {url}")
    config = uvicorn.Config(
        app,
        host=options.host,
        port=options.port,
        log_level="warning",
        timeout_graceful_shutdown=5,
    )
    uvicorn.Server(config).run()


class BearerAuth:
    """ASGI middleware: pass a request on only if it carries the bearer token."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        if not token:
            raise TransportError("an empty bearer token would let anyone in")
        self.app = app
        self._token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        from starlette.datastructures import Headers
        from starlette.responses import JSONResponse

        if scope["type"] == "http" and not self._authorized(Headers(scope=scope)):
            response = JSONResponse(
                {
                    "error": "unauthorized",
                    "message": "send the server's token as `Authorization: Bearer <token>`",
                },
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="kubecrew-mcp"'},
            )
            await response(scope, receive, send)
        elif scope["type"] in ("http", "lifespan"):
            await self.app(scope, receive, send)
        else:  # websocket: this server speaks none
            await send({"type": "websocket.close", "code": 1008})

    def _authorized(self, headers: Headers) -> bool:
        scheme, _, given = headers.get("authorization", "").partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(
            given.strip().encode(), self._token
        )


# --- the token -----------------------------------------------------------------------------------


def strong_token(token: str, *, source: str = "the bearer token") -> str:
    """`token`, or TransportError when it holds less than TOKEN_BYTES random bytes by the
    estimate of the module docstring (`source` names where it came from, for the message)."""
    alphabet = next((len(a) for a in _ALPHABETS if a.issuperset(token)), _PRINTABLE)
    bits = len(token) * math.log2(alphabet)
    if bits < TOKEN_BYTES * 8 or len(set(token)) < _DISTINCT:
        raise TransportError(
            f"{source} is too weak to guard the server (about {int(bits)} bits, from "
            f"{len(token)} characters; it takes {TOKEN_BYTES} random bytes, {TOKEN_BYTES * 8} "
            f"bits): make one with {MAKE_TOKEN}, or omit it and the server generates one"
        )
    return token


def bearer_token(
    options: TransportOptions, *, name: str, environ: Mapping[str, str] = os.environ
) -> str:
    """The token HTTP requests must carry: the file's, else `$KUBECREW_MCP_TOKEN`, else a new
    random one written to a 0600 file (`generated_token_path`) whose path is printed."""
    if options.token_file is not None:
        return _read_token(options.token_file)
    from_env = _env_token(environ)
    if from_env:
        return from_env
    path = generated_token_path(name, environ)
    token = secrets.token_urlsafe(TOKEN_BYTES)  # random by construction: nothing to estimate
    _write_private(path, token + "\n")
    _say(f"bearer token written to {path} (send it as `Authorization: Bearer <token>`)")
    return token


def generated_token_path(name: str, environ: Mapping[str, str] = os.environ) -> Path:
    return kubecrew_home(environ) / "mcp" / f"{name}.token"


def _read_token(path: Path) -> str:
    try:
        token = path.expanduser().read_text().strip()
    except OSError as exc:
        raise TransportError(
            f"cannot read --token-file {path}: {exc.strerror}; "
            f"give a readable file, set ${TOKEN_ENV}, or omit both to generate a token"
        ) from exc
    if not token:
        raise TransportError(
            f"--token-file {path} is empty; put a bearer token in it ({MAKE_TOKEN})"
        )
    return strong_token(token, source=f"the token in --token-file {path}")


def _env_token(environ: Mapping[str, str]) -> str:
    """`$KUBECREW_MCP_TOKEN`, checked; "" when unset."""
    token = environ.get(TOKEN_ENV, "").strip()
    return strong_token(token, source=f"${TOKEN_ENV}") if token else ""


def _write_private(path: Path, text: str) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        os.fchmod(handle.fileno(), 0o600)  # an older file may have had a wider mode
        handle.write(text)


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _say(line: str) -> None:
    # stderr: stdout may be a protocol stream, and hosts show a server's stderr as its log.
    print(line, file=sys.stderr, flush=True)
