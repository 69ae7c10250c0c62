"""The kubelet's half of `kubectl port-forward`: one TCP connection to a port of a pod, as the
simulated network answers it.

The kubelet (through containerd) connects to `localhost:PORT` inside the pod's network
namespace; what listens there is what `dialing.ClusterNetwork` says answers a connection from
the pod to itself: the profile's HTTP listener once the app has started, a plain TCP listener,
or nobody. Nobody is containerd's error, which the kubelet writes on the forward's error stream
and kubectl prints: `error forwarding port 80 to pod <sandbox id>, uid : failed to execute
portforward in network namespace "/var/run/netns/cni-...": failed to connect to localhost:80
inside namespace "<sandbox id>", IPv4: dial tcp4 127.0.0.1:80: connect: connection refused IPv6
dial tcp6 [::1]:80: connect: connection refused ` (containerd 1.7's words, trailing space kept).

An HTTP listener is modelled as an HTTP/1.1 server: the bytes are read until a whole request
(head, and a `Content-Length` body) is in, answered as the app answers that path (status and
body as `curl` in the pod would see them, `nettools`), and the connection stays open for the
next request unless the client asked `Connection: close` (or spoke HTTP/1.0 without
keep-alive). Bytes that are not HTTP get Go's and nginx's `400 Bad Request` and the connection
closes. A listener that speaks no HTTP (redis, postgres) takes the bytes and answers nothing.
Nothing here touches the host's network.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass

from sandbox.kubelet.dialing import LOOPBACK, ClusterNetwork
from sandbox.kubelet.nettools import REASONS, Listener, body
from sandbox.kubelet.pods import PodKubelet
from sandbox.store import Obj

MAX_REQUEST = 1024 * 1024  # bytes of one request held before the server gives up on it


@dataclass(frozen=True)
class Answer:
    data: bytes  # what the container writes back
    close: bool  # the container closes the connection after writing it


def connect(kubelet: PodKubelet, pod: Obj, port: int) -> Connection | str:
    """A connection to `port` of the pod, or the kubelet's error message for the stream."""
    dial = ClusterNetwork(kubelet, pod).connect(LOOPBACK, port)
    if isinstance(dial, Listener):
        return Connection(dial)
    sandbox_id = hashlib.sha256(f"sandbox:{pod['metadata'].get('uid')}".encode()).hexdigest()
    netns = uuid.UUID(sandbox_id[:32])
    return (
        f"error forwarding port {port} to pod {sandbox_id}, uid : failed to execute portforward "
        f'in network namespace "/var/run/netns/cni-{netns}": failed to connect to '
        f'localhost:{port} inside namespace "{sandbox_id}", IPv4: dial tcp4 127.0.0.1:{port}: '
        f"connect: connection refused IPv6 dial tcp6 [::1]:{port}: connect: connection refused "
    )


class Connection:
    """One forwarded connection: bytes in, the listener's answers out."""

    def __init__(self, listener: Listener) -> None:
        self.listener = listener
        self._buffer = bytearray()

    def feed(self, data: bytes) -> Answer:
        """What the container answers once `data` has arrived (maybe nothing yet)."""
        if not self.listener.http:
            return Answer(b"", close=False)
        self._buffer += data
        out = bytearray()
        while True:
            request = self._request()
            if request is None:
                return Answer(bytes(out), close=False)
            if isinstance(request, bytes):  # not HTTP, or too large to hold
                return Answer(bytes(out) + request, close=True)
            answer = self._answer(request)
            out += answer.data
            if answer.close:
                return Answer(bytes(out), close=True)

    def _request(self) -> _Request | bytes | None:
        end = self._buffer.find(b"\r\n\r\n")
        if end < 0:
            too_long = len(self._buffer) > MAX_REQUEST
            return _plain(431, "Request Header Fields Too Large") if too_long else None
        head = bytes(self._buffer[:end]).decode("latin-1").split("\r\n")
        words = head[0].split(" ")
        if len(words) != 3 or not words[2].startswith("HTTP/1."):
            return _plain(400, "Bad Request")
        fields = {}
        for line in head[1:]:
            name, _, value = line.partition(":")
            fields[name.strip().lower()] = value.strip()
        length = fields.get("content-length", "0")
        if not length.isdigit():
            return _plain(400, "Bad Request")
        total = end + 4 + int(length)
        if int(length) > MAX_REQUEST:
            return _plain(413, "Request Entity Too Large")
        if len(self._buffer) < total:
            return None
        del self._buffer[:total]
        connection = fields.get("connection", "").lower()
        keep = connection != "close" if words[2] == "HTTP/1.1" else connection == "keep-alive"
        return _Request(method=words[0], path=words[1], keep_alive=keep)

    def _answer(self, request: _Request) -> Answer:
        status = self.listener.answer(request.path)
        text = body(status, request.path).encode()
        head = [
            f"HTTP/1.1 {status} {REASONS.get(status, '')}",
            "Content-Type: text/plain; charset=utf-8",
            f"Content-Length: {len(text)}",
        ]
        if not request.keep_alive:
            head.append("Connection: close")
        payload = b"" if request.method == "HEAD" else text
        data = ("\r\n".join(head) + "\r\n\r\n").encode() + payload
        return Answer(data, close=not request.keep_alive)


@dataclass(frozen=True)
class _Request:
    method: str
    path: str
    keep_alive: bool


def _plain(status: int, reason: str) -> bytes:
    return (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Connection: close\r\n\r\n{status} {reason}"
    ).encode()
