"""`pods/exec` and `pods/attach`: the API server's half of `kubectl exec` and `kubectl attach`.

Before the upgrade the API server answers as kube-apiserver does, with a Status over plain
HTTP: the pod must exist (404 `pods "x" not found`), the container must be one of the pod's
(400 `container x is not valid for pod y`; with several containers and none named, 400 `a
container name must be specified for pod y, choose one of: [a b]`), the pod must have a node
(400 `pod y does not have a host assigned`), an exec needs a command (400 `you must specify at
least 1 command`) and some stream (400 `you must specify at least one of stdin, stdout,
stderr`). RBAC has been asked by then (`sandbox.app`): a WebSocket GET needs `get` on the
subresource and, as kube-apiserver checks it for WebSocket upgrades, `create` too.

After the upgrade (`sandbox.channels`) the kubelet does the work (`sandbox.kubelet.streaming`);
what it cannot do becomes an InternalError Status on the error channel, which kubectl prints
as `error: Internal error occurred: ...` and exits 1. Stdin is bounded (`MAX_STDIN`): past it
the session ends with an error rather than holding more in memory. A client that leaves
mid-stream cancels the command. SPDY, kubectl's fallback, is not spoken (see `channels`).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import parse_qsl

from sandbox import channels
from sandbox.channels import RESIZE, STDERR, STDIN, STDOUT, Channels
from sandbox.cluster import Cluster
from sandbox.errors import ApiError, BadRequest, InternalError
from sandbox.http import Receive, Scope, Send, parse_bool
from sandbox.kubelet import streaming
from sandbox.kubelet.coreutils import Stdio
from sandbox.kubelet.layer import encode
from sandbox.routing import Route
from sandbox.store import Obj

Kind = Literal["exec", "attach"]
STREAMING: tuple[Kind, ...] = ("exec", "attach")
MAX_STDIN = 1024 * 1024  # bytes of stdin one exec or attach may send


@dataclass(frozen=True)
class StreamOptions:
    """PodExecOptions / PodAttachOptions, from the query string."""

    container: str
    command: tuple[str, ...]
    stdin: bool
    stdout: bool
    stderr: bool
    tty: bool

    @classmethod
    def parse(cls, pairs: list[tuple[str, str]]) -> StreamOptions:
        """From the query's (name, value) pairs: `command` repeats, once per argument."""
        values = dict(pairs)

        def flag(name: str) -> bool:
            return parse_bool(values.get(name), name=name)

        return cls(
            container=values.get("container", ""),
            command=tuple(value for key, value in pairs if key == "command"),
            stdin=flag("stdin"),
            stdout=flag("stdout"),
            stderr=flag("stderr"),
            tty=flag("tty"),
        )


def check(cluster: Cluster, target: Route, options: StreamOptions) -> tuple[Obj, str]:
    """The pod and container the request streams to, or the API server's error."""
    assert target.rt is not None
    pod = cluster.objects.get(target.rt, target.namespace, target.name)
    name = pod["metadata"]["name"]
    if target.subresource == "exec" and not options.command:
        raise BadRequest("you must specify at least 1 command")
    if not (options.stdin or options.stdout or options.stderr):
        raise BadRequest("you must specify at least one of stdin, stdout, stderr")
    spec = pod.get("spec") or {}
    names = [str(c.get("name")) for c in spec.get("containers") or ()]
    container = options.container
    if not container:
        if len(names) != 1:
            raise BadRequest(
                f"a container name must be specified for pod {name}, "
                f"choose one of: [{' '.join(names)}]"
            )
        container = names[0]
    elif container not in names:
        raise BadRequest(f"container {container} is not valid for pod {name}")
    if not spec.get("nodeName"):
        raise BadRequest(f"pod {name} does not have a host assigned")
    return pod, container


def refuse_spdy(cluster: Cluster, target: Route, query: dict[str, str]) -> None:
    """A request that did not come as a WebSocket upgrade: checked, then refused."""
    check(cluster, target, StreamOptions.parse(list(query.items())))
    raise BadRequest(
        f"the sandbox serves pods/{target.subresource} over WebSocket only "
        f"({', '.join(p for p in channels.SUPPORTED)}); SPDY/3.1 is not supported"
    )


async def serve(
    cluster: Cluster, target: Route, scope: Scope, receive: Receive, send: Send
) -> None:
    """Check, upgrade, run the exec or attach, and close with its outcome."""
    query = scope.get("query_string", b"").decode("latin-1")
    options = StreamOptions.parse(parse_qsl(query, keep_blank_values=True))
    pod, container = check(cluster, target, options)
    protocol = channels.negotiate(list(scope.get("subprotocols") or ()))
    if protocol is None:
        raise BadRequest(
            f"the requested protocols {list(scope.get('subprotocols') or ())} are not "
            f"supported; the sandbox supports {list(channels.SUPPORTED)}"
        )
    wire = Channels(receive, send, protocol)
    await wire.accept()
    session = _Session(wire, options)
    kubelet = streaming.kubelet_of(cluster.control)
    work: Coroutine[Any, Any, int | None]
    if target.subresource == "exec":
        command = list(options.command)
        work = streaming.execute(kubelet, pod, container, command, session.stdio())
    else:
        work = streaming.attach(kubelet, pod, container, session.stdio())
    await wire.finish(await session.run(work, list(options.command)))


class _Session:
    """Moves bytes between the WebSocket and the process while the work runs."""

    def __init__(self, wire: Channels, options: StreamOptions) -> None:
        self.wire = wire
        self.options = options
        self.stdin: asyncio.Queue[str | None] = asyncio.Queue()
        self.overflow = False
        self.left = asyncio.Event()

    def stdio(self) -> Stdio:
        async def read() -> str | None:
            return await self.stdin.get() if self.options.stdin else None

        async def out(text: str) -> None:
            if self.options.stdout:
                await self.wire.write(STDOUT, encode(text))

        async def err(text: str) -> None:
            if self.options.stderr:
                await self.wire.write(STDERR if not self.options.tty else STDOUT, encode(text))

        return Stdio(_Reader(read), out, err)

    async def run(
        self, work: Coroutine[Any, Any, int | None], command: list[str]
    ) -> dict[str, Any]:
        pump = asyncio.create_task(self._pump())
        task = asyncio.ensure_future(work)
        left = asyncio.create_task(self.left.wait())
        try:
            await asyncio.wait({task, left}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for pending in (task, left, pump):
                if not pending.done():
                    pending.cancel()
            for pending in (task, left, pump):
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await pending
        if self.overflow:
            return _failure(
                f"stdin exceeded the sandbox's limit of {MAX_STDIN} bytes per exec or "
                "attach; send less (or copy large files another way)"
            )
        if not task.done() or task.cancelled():
            return channels.exit_status(0, command)
        if isinstance(task.exception(), streaming.Unreachable):
            return _failure(str(task.exception()))
        if task.exception() is not None:
            raise InternalError("the exec failed inside the sandbox") from task.exception()
        return channels.exit_status(task.result() or 0, command)

    async def _pump(self) -> None:
        received = 0
        # Bytes that are not UTF-8 (a tar stream from `kubectl cp`) pass as surrogate escapes.
        decoder = codecs.getincrementaldecoder("utf-8")("surrogateescape")
        async for channel, data in self.wire.messages():
            if channel == STDIN:
                received += len(data)
                if received > MAX_STDIN:
                    self.overflow = True
                    break
                self.stdin.put_nowait(decoder.decode(data))
            elif channel == channels.CLOSE and data[:1] == bytes([STDIN]):
                self.stdin.put_nowait(None)
            elif channel == RESIZE:
                continue  # no terminal is simulated: a new window size changes nothing
        self.stdin.put_nowait(None)
        self.left.set()


class _Reader:
    def __init__(self, read: Any) -> None:
        self._read = read
        self._ended = False

    async def read(self) -> str | None:
        if self._ended:
            return None
        chunk: str | None = await self._read()
        if chunk is None:
            self._ended = True
        return chunk


def _failure(message: str) -> dict[str, Any]:
    status = InternalError(f"Internal error occurred: {message}").status()
    return {k: v for k, v in status.items() if k not in ("kind", "apiVersion")}


async def deny(send: Send, error: ApiError) -> None:
    await channels.deny(send, error)
