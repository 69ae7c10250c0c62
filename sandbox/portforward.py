"""`pods/portforward`: the API server's and kubelet's half of `kubectl port-forward`.

Measured with kubectl 1.37.1 against the sandbox (ASGI scope and frames logged): kubectl first
sends `GET .../pods/NAME/portforward` (no query string) as a WebSocket upgrade with
`Sec-WebSocket-Protocol: SPDY/3.1+portforward.k8s.io` alone (the PortForwardWebsockets
tunnel). Accepted, it speaks SPDY/3.1 as a client inside binary WebSocket messages, one message
per Go write (a frame header arrives as `80 03`, `00 01`, then the length...). For each local
connection it opens two streams, first `streamtype: error` then `streamtype: data`, both with
`port: 80` and `requestid: N` (0, 1, ... per connection), waiting for a SYN_REPLY to each; it
closes its half of the error stream at once (empty DATA with FIN), copies the local bytes to
the data stream, FINs it when the local client closes, and resets it (RST_STREAM CANCEL) once
the remote side has finished. Whatever arrives on the error stream before its FIN is printed
as `an error occurred forwarding 8080 -> 80: <text>`. On SIGINT it sends GOAWAY and closes.
When the WebSocket upgrade is refused (any non-101), kubectl falls back to `POST` of the same
URL with `Upgrade: SPDY/3.1` and `X-Stream-Protocol-Version: portforward.k8s.io`; ASGI cannot
hand over a raw connection for that, so the sandbox answers it with a 400 after the same
checks (and RBAC has refused it already when it refused the WebSocket).

Before the upgrade, as kube-apiserver: the pod must exist (404) and have a node (400 `pod web
does not have a host assigned`); a dead node's kubelet cannot be dialed (500 `error dialing
backend`). RBAC (`sandbox.app`) asks `get` and, for a WebSocket, `create` on pods/portforward.
kubectl itself refuses a pod whose phase is not Running before it sends anything.

After the upgrade the session (`_Session`) answers each SYN_STREAM with a SYN_REPLY, pairs the
streams by request id, and connects the data stream to the pod's port through the kubelet
(`sandbox.kubelet.forwarding`); a refused port's error goes on the error stream, then both
streams are closed. SPDY itself is `sandbox.spdy`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sandbox import spdy
from sandbox.cluster import Cluster
from sandbox.errors import BadRequest, InternalError
from sandbox.http import Receive, Scope, Send
from sandbox.kubelet import forwarding, streaming
from sandbox.kubelet.pods import PodKubelet
from sandbox.routing import Route
from sandbox.store import Obj

SUBRESOURCE = "portforward"
PROTOCOL = "SPDY/3.1+portforward.k8s.io"
_ACK_AT = spdy.DEFAULT_WINDOW // 2  # unacknowledged bytes on a stream before a WINDOW_UPDATE


def check(cluster: Cluster, target: Route) -> Obj:
    """The pod to forward to, or the API server's error."""
    assert target.rt is not None
    pod = cluster.objects.get(target.rt, target.namespace, target.name)
    spec = pod.get("spec") or {}
    if not spec.get("nodeName"):
        raise BadRequest(f"pod {pod['metadata']['name']} does not have a host assigned")
    return pod


def refuse_spdy(cluster: Cluster, target: Route) -> None:
    """kubectl's fallback, a plain SPDY/3.1 upgrade: checked, then refused."""
    check(cluster, target)
    raise BadRequest(
        f"the sandbox serves pods/portforward over WebSocket only ({PROTOCOL}); a plain "
        "SPDY/3.1 upgrade is not supported"
    )


async def serve(
    cluster: Cluster, target: Route, scope: Scope, receive: Receive, send: Send
) -> None:
    """Check, upgrade, and forward until the client goes."""
    pod = check(cluster, target)
    offered = list(scope.get("subprotocols") or ())
    if PROTOCOL not in offered:
        raise BadRequest(
            f"the requested protocols {offered} are not supported; the sandbox supports "
            f"[{PROTOCOL}]"
        )
    kubelet = streaming.kubelet_of(cluster.control)
    node = str((pod.get("spec") or {}).get("nodeName") or "")
    if not kubelet.ctx.world.node(node).heartbeat:
        host = (pod.get("status") or {}).get("hostIP") or node
        raise InternalError(f"error dialing backend: dial tcp {host}:10250: i/o timeout")
    await send({"type": "websocket.accept", "subprotocol": PROTOCOL})
    await _Session(kubelet, pod, receive, send).run()


@dataclass
class _Pair:
    """The two streams of one forwarded connection."""

    error: int = 0
    data: int = 0
    port: int = 0
    connection: forwarding.Connection | None = None
    closed: set[int] = field(default_factory=set)  # streams the sandbox has FINed
    unacked: int = 0


class _Session:
    def __init__(self, kubelet: PodKubelet, pod: Obj, receive: Receive, send: Send) -> None:
        self.kubelet = kubelet
        self.pod = pod
        self._receive = receive
        self._send = send
        self.reader = spdy.Reader()
        self.writer = spdy.Writer()
        self.pairs: dict[str, _Pair] = {}
        self.of_stream: dict[int, _Pair] = {}
        self.gone = False

    async def run(self) -> None:
        while not self.gone:
            message = await self._receive()
            if message["type"] == "websocket.disconnect":
                return
            raw = message.get("bytes") or (message.get("text") or "").encode()
            try:
                frames = self.reader.feed(raw)
            except spdy.ProtocolError:
                await self._write(spdy.Frame(spdy.GOAWAY, status=spdy.PROTOCOL_ERROR))
                break
            for frame in frames:
                await self._handle(frame)
        if not self.gone:
            await self._close()

    async def _handle(self, frame: spdy.Frame) -> None:
        if frame.kind == spdy.SYN_STREAM:
            await self._opened(frame)
        elif frame.kind == spdy.DATA:
            await self._data(frame)
        elif frame.kind == spdy.RST_STREAM:
            pair = self.of_stream.pop(frame.stream, None)
            if pair is not None:
                await self._finish(pair)
        elif frame.kind == spdy.PING:
            await self._write(frame)  # a client's ping is answered with the same id
        elif frame.kind == spdy.GOAWAY:
            self.gone = True  # the client goes; nothing new will be opened

    async def _opened(self, frame: spdy.Frame) -> None:
        await self._write(spdy.Frame(spdy.SYN_REPLY, frame.stream))
        headers = frame.headers
        pair = self.pairs.setdefault(headers.get("requestid", ""), _Pair())
        self.of_stream[frame.stream] = pair
        kind = headers.get("streamtype")
        if kind == "error":
            pair.error = frame.stream
        elif kind == "data":
            pair.data = frame.stream
        else:
            await self._write(spdy.Frame(spdy.RST_STREAM, frame.stream, status=spdy.PROTOCOL_ERROR))
            return
        port = headers.get("port", "")
        if not port.isdigit() or not 0 < int(port) < 65536:
            await self._fail(pair, f'invalid port: "{port}"')
            return
        pair.port = int(port)
        if pair.error and pair.data and pair.connection is None:
            found = forwarding.connect(self.kubelet, self.pod, pair.port)
            if isinstance(found, str):
                await self._fail(pair, found)
            else:
                pair.connection = found

    async def _data(self, frame: spdy.Frame) -> None:
        pair = self.of_stream.get(frame.stream)
        if pair is None or frame.stream != pair.data:
            return  # the error stream carries nothing from the client but its FIN
        if frame.data and pair.connection is not None and pair.data not in pair.closed:
            pair.unacked += len(frame.data)
            if pair.unacked >= _ACK_AT:
                delta, pair.unacked = pair.unacked, 0
                await self._write(spdy.Frame(spdy.WINDOW_UPDATE, pair.data, value=delta))
            answer = pair.connection.feed(frame.data)
            if answer.data:
                await self._write(spdy.Frame(spdy.DATA, pair.data, data=answer.data))
            if answer.close:
                await self._finish(pair)
        if frame.fin:
            await self._finish(pair)

    async def _fail(self, pair: _Pair, message: str) -> None:
        if pair.error and pair.error not in pair.closed:
            await self._write(spdy.Frame(spdy.DATA, pair.error, data=message.encode()))
        await self._finish(pair)

    async def _finish(self, pair: _Pair) -> None:
        """Close the sandbox's half of both streams (once each)."""
        for stream in (pair.data, pair.error):
            if stream and stream not in pair.closed:
                pair.closed.add(stream)
                await self._write(spdy.Frame(spdy.DATA, stream, flags=spdy.FLAG_FIN))

    async def _write(self, frame: spdy.Frame) -> None:
        if self.gone and frame.kind != spdy.GOAWAY:
            return
        try:
            await self._send({"type": "websocket.send", "bytes": self.writer.write(frame)})
        except Exception:  # the connection is gone under us (uvicorn: ClientDisconnected)
            self.gone = True

    async def _close(self) -> None:
        try:
            await self._send({"type": "websocket.close", "code": 1000})
        except Exception:  # already closed by the client
            self.gone = True
