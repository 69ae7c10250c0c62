"""The thin HTTP layer under the API: ASGI request parsing, content negotiation and responses.

Kept apart from the API semantics so the verbs deal in dicts and errors, never in ASGI messages.
Bodies are bounded (`MAX_BODY`, as kube-apiserver bounds them), decoded by `sandbox.bodies`
(which also bounds their nesting), and every decoding failure becomes a
`BadRequest`/`UnsupportedMediaType`, never a traceback.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote

import orjson

from sandbox import bodies
from sandbox.errors import BadRequest, RequestEntityTooLarge, UnsupportedMediaType
from sandbox.limits import MAX_BODY as MAX_BODY  # kube-apiserver's request body limit
from sandbox.limits import check_depth

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

JSON = "application/json"
PROTOBUF = "application/vnd.kubernetes.protobuf"
TABLE_MARK = "as=Table"
PATCH_TYPES = {
    "application/json-patch+json": "json",
    "application/merge-patch+json": "merge",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
    "application/apply-patch+cbor": "unsupported",
}

YAML_TYPES = ("application/apply-patch+yaml", "application/yaml")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_TRUE = {"1", "t", "T", "true", "TRUE", "True"}
_FALSE = {"0", "f", "F", "false", "FALSE", "False"}


def parse_bool(value: str | None, *, name: str) -> bool:
    """Go's strconv.ParseBool, which clients rely on (kubernetes_asyncio sends `watch=True`)."""
    if value is None or value == "":
        return False
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise BadRequest(f'invalid boolean value "{value}" for query parameter "{name}"')


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # lower-cased names; repeated headers joined with ", "
    body: bytes = b""
    # Warnings the request collects on its way (a deprecated version's), sent with its answer.
    warnings: list[str] = field(default_factory=list)
    # What the decoded body goes through: stamps moved to sandbox time (sandbox.timeframe).
    inbound: Callable[[Any], Any] | None = None
    # The decoded body, once asked for, and the duplicate keys found while reading YAML.
    _decoded: Any = field(default=None, init=False, repr=False)
    _yaml_duplicates: list[str] | None = field(default=None, init=False, repr=False)

    @classmethod
    async def read(cls, scope: Scope, receive: Receive) -> Request:
        headers: dict[str, str] = {}
        for raw_name, raw_value in scope["headers"]:
            name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"), True))
        # A WebSocket scope has no method: its handshake is a GET.
        request = cls(scope.get("method", "GET"), unquote(scope["path"]), query, headers)
        if request.method in ("POST", "PUT", "PATCH", "DELETE"):
            request.body = await _read_body(receive)
        return request

    def flag(self, name: str) -> bool:
        return parse_bool(self.query.get(name), name=name)

    def int_param(self, name: str) -> int | None:
        raw = self.query.get(name)
        if raw in (None, ""):
            return None
        try:
            return int(raw)
        except ValueError:
            raise BadRequest(f'invalid value "{raw}" for query parameter "{name}"') from None

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", JSON).split(";")[0].strip().lower()

    @property
    def wants_table(self) -> bool:
        return TABLE_MARK in self.headers.get("accept", "")

    def json_body(self) -> Any:
        """The body as JSON (or YAML, which apply-patch allows); empty body -> None."""
        if not self.body.strip():
            return None
        if self._decoded is None:
            self._decoded = self._inbound(self._decode())
        return self._decoded

    def _inbound(self, value: Any) -> Any:
        return value if self.inbound is None else self.inbound(value)

    def _decode(self) -> Any:
        if self.content_type not in YAML_TYPES:
            return bodies.from_json(self.body)
        value, self._yaml_duplicates = bodies.from_json_or_yaml(self.body)
        return value

    def duplicate_fields(self, *, json_patch: bool = False) -> list[str]:
        """Keys the body repeats, worded for strict decoding; [] for a body that is not JSON or
        YAML, or does not decode (the decode that matters reports that, in its turn)."""
        if self.content_type not in (JSON, "*/*", "", *YAML_TYPES, *PATCH_TYPES):
            return []
        try:
            if self.json_body() is None:
                return []
        except BadRequest:
            return []
        if self._yaml_duplicates is not None:
            return self._yaml_duplicates
        return bodies.duplicate_fields(self.body, json_patch=json_patch)


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            raise RequestEntityTooLarge(
                f"the request body is {size}+ bytes; the limit is {MAX_BODY} bytes"
            )
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def decode_object(request: Request, decoders: dict[str, Callable[[bytes], Any]]) -> Any:
    """Decode a create/update body by Content-Type (JSON when the header is absent)."""
    content_type = request.content_type
    decoder = decoders.get(content_type)
    if decoder is not None:
        decoded = decoder(request.body)
        check_depth(decoded)
        return request._inbound(decoded)
    if content_type in (JSON, "application/yaml", "*/*", ""):
        return request.json_body()
    raise UnsupportedMediaType(
        f"the body of the request was in an unknown format - accepted media types include: "
        f"{', '.join([JSON, 'application/yaml', *decoders])}"
    )


def dumps(value: Any) -> bytes:
    return orjson.dumps(value)


async def respond(
    send: Send,
    status: int,
    body: bytes,
    *,
    content_type: str = JSON,
    warnings: list[str] | None = None,
    extra_headers: dict[str, str] | None = None,
) -> None:
    headers = [
        (b"content-type", content_type.encode()),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-cache, private"),
    ]
    headers += [(k.lower().encode(), v.encode()) for k, v in (extra_headers or {}).items()]
    headers += [warning_header(warning) for warning in warnings or ()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def warning_header(text: str) -> tuple[bytes, bytes]:
    """A `Warning: 299 - "text"` header, as kube-apiserver writes one and client-go reads it."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    # A header value cannot carry control characters; warnings quote what clients sent.
    escaped = _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", escaped)
    return (b"warning", f'299 - "{escaped}"'.encode())


def with_warnings(send: Send, warnings: list[str]) -> Send:
    """`send`, adding to whatever answer it starts the warnings in `warnings` at that moment
    (those a request collected on its way: they hold for its errors as for its answer)."""

    async def warned(message: Message) -> None:
        if message["type"] == "http.response.start" and warnings:
            headers = [*message.get("headers", ()), *(warning_header(w) for w in warnings)]
            message = {**message, "headers": headers}
        await send(message)

    return warned


async def start_stream(send: Send, content_type: str = JSON) -> None:
    headers = [(b"content-type", content_type.encode()), (b"cache-control", b"no-cache, private")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})


async def stream_chunk(send: Send, data: bytes) -> None:
    await send({"type": "http.response.body", "body": data, "more_body": True})


async def end_stream(send: Send) -> None:
    await send({"type": "http.response.body", "body": b"", "more_body": False})
