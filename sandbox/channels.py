"""The channel.k8s.io WebSocket protocols that carry exec and attach streams, over ASGI.

Measured with kubectl 1.37.1 against the sandbox (handshake logged from the ASGI scope): for
`exec` and `attach` it sends `GET .../pods/NAME/exec?command=a&command=b&container=C&stdin=true&
stdout=true&stderr=true` (attach: no `command`; `tty=true` only when stdin is a terminal) with
`Connection: Upgrade`, `Upgrade: websocket`, `Sec-WebSocket-Version: 13` and
`Sec-WebSocket-Protocol: v5.channel.k8s.io` alone, plus its bearer token. Only when that
upgrade fails (any non-101 answer) does it fall back to SPDY: `POST` of the same URL with
`Upgrade: SPDY/3.1` and `X-Stream-Protocol-Version` v5, v4, v3, v2 and `channel.k8s.io`; so a
server that speaks WebSocket never sees SPDY from kubectl 1.37, and the sandbox answers SPDY
with a 400 after the same checks (its error then is the one kubectl prints, e.g. `error:
unable to upgrade connection: pods "web" is forbidden: ...`). The official Python client
(`kubernetes` 37.0.2, `stream(connect_get_namespaced_pod_exec, ...)`) offers
`v5.channel.k8s.io, v4.channel.k8s.io` (measured); `kubernetes_asyncio` offers
`v4.channel.k8s.io` (read in its source, not measured). uvicorn speaks the WebSocket through
the `websockets` package, which the environment has only as a dependency of langgraph-sdk and
langsmith.

Framing, as the kubelet's wsstream serves it: every message starts with its channel (0 stdin,
1 stdout, 2 stderr, 3 error, 4 resize); binary protocols carry raw bytes after that byte, the
base64 ones a text message of the channel digit and the base64 data. v5 adds channel 255: a
client message `[255, n]` closes its stream n (kubectl sends `[255, 0]` at the end of stdin).
The server writes its outcome once on the error channel and closes the WebSocket: from v4 on a
JSON `Status` (`Success`, or `Failure` with reason `NonZeroExitCode` and the code in a cause of
reason `ExitCode`, which kubectl turns into its own exit code), before v4 only the message of a
failure. The chosen protocol is the client's first offer the server knows (the empty list means
the unnamed binary protocol).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import AsyncIterator
from typing import Any

import orjson

from sandbox.errors import ApiError
from sandbox.http import Message, Receive, Send, dumps

STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255
V5, V4 = "v5.channel.k8s.io", "v4.channel.k8s.io"
_BINARY = {V5, V4, "channel.k8s.io", ""}
_BASE64 = {"v4.base64.channel.k8s.io", "base64.channel.k8s.io"}
SUPPORTED = (V5, V4, "v4.base64.channel.k8s.io", "channel.k8s.io", "base64.channel.k8s.io")
_STATUS_JSON = {V5, V4, "v4.base64.channel.k8s.io"}


def negotiate(offered: list[str]) -> str | None:
    """The protocol to speak: the client's first offer the sandbox knows; None if none."""
    if not offered:
        return ""
    return next((p for p in offered if p in SUPPORTED), None)


def exit_status(code: int, command: list[str]) -> dict[str, Any]:
    """The error channel's Status for a command that exited with `code`, as the kubelet says."""
    if code == 0:
        return {"metadata": {}, "status": "Success"}
    return {
        "metadata": {},
        "status": "Failure",
        "message": (
            "command terminated with non-zero exit code: error executing command "
            f"[{' '.join(command)}], exit code {code}"
        ),
        "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]},
    }


class Channels:
    """One accepted WebSocket speaking `protocol`; `gone` once the client has left."""

    def __init__(self, receive: Receive, send: Send, protocol: str) -> None:
        self._receive = receive
        self._send = send
        self.protocol = protocol
        self.gone = False

    async def accept(self) -> None:
        await self._send({"type": "websocket.accept", "subprotocol": self.protocol or None})

    async def write(self, channel: int, data: bytes) -> None:
        if self.gone:
            return
        if self.protocol in _BASE64:
            text = str(channel) + base64.b64encode(data).decode()
            message: Message = {"type": "websocket.send", "text": text}
        else:
            message = {"type": "websocket.send", "bytes": bytes([channel]) + data}
        try:
            await self._send(message)
        except Exception:  # the connection is gone under us (uvicorn: ClientDisconnected)
            self.gone = True

    async def finish(self, status: dict[str, Any]) -> None:
        """Write the outcome on the error channel and close the connection."""
        if self.protocol in _STATUS_JSON:
            await self.write(ERROR, orjson.dumps(status))
        elif status.get("status") != "Success":
            await self.write(ERROR, str(status.get("message") or "").encode())
        if not self.gone:
            try:
                await self._send({"type": "websocket.close", "code": 1000})
            except Exception:  # already closed by the client
                self.gone = True

    async def messages(self) -> AsyncIterator[tuple[int, bytes]]:
        """(channel, data) of each client message, until it closes the connection."""
        while True:
            message = await self._receive()
            kind = message["type"]
            if kind == "websocket.disconnect":
                self.gone = True
                return
            if kind != "websocket.receive":
                continue  # websocket.connect, queued before the accept
            frame = _decode(message, base64_text=self.protocol in _BASE64)
            if frame is not None:
                yield frame


def _decode(message: Message, *, base64_text: bool) -> tuple[int, bytes] | None:
    raw = message.get("bytes")
    if raw:
        return raw[0], raw[1:]
    text = message.get("text")
    if not text:
        return None
    if base64_text and text[0].isdigit():
        try:
            return int(text[0]), base64.b64decode(text[1:])
        except binascii.Error:
            return None
    return ord(text[0]), text[1:].encode()


async def deny(send: Send, error: ApiError) -> None:
    """Refuse the upgrade with a Status, as the API server does before switching protocols."""
    body = dumps(error.status())
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "websocket.http.response.start", "status": error.code, "headers": headers})
    await send({"type": "websocket.http.response.body", "body": body})
