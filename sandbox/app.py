"""The ASGI application: authenticate, route, authorize, dispatch, and answer like kube-apiserver.

Every failure becomes a Kubernetes `Status` body with the right code; an unexpected exception is
logged with its traceback on the server side and answered with a 500 Status that says where to
look, never with a traceback on the wire. Long-running requests (watch, `logs -f`) stream.
WebSocket upgrades (`exec`, `attach`: `sandbox.connect`; `portforward`: `sandbox.portforward`)
are authenticated and authorized as HTTP requests are, and refused with the same Status bodies
before the protocol switches.

`/kubecrew/...` paths are the sandbox's own endpoints (`sandbox.admin`: faults, clock, metrics);
`/registries/...` are the world's image registries (`sandbox.registryapi`), outside Kubernetes;
`/metrics` is the API server's own metrics (`sandbox.exposition.render_api_server`).

The served API follows the control plane's version: the registry is told it before each request
is routed. A request to a deprecated version served as an alias (sandbox.deprecations) carries
its warning and is recorded for `apiserver_requested_deprecated_apis` from the minor that
deprecates it; its body reaches the verbs in the current version and its answer leaves in the
requested one, so the verbs never know which version was asked.

When an API fault is active (`world.api`), Kubernetes paths misbehave on purpose for a fraction of
requests, drawn from a generator seeded by the world's seed: 500 InternalError, 429 with
Retry-After, 504 Timeout, or a watch cut after its first event. With no API fault the only cost is
one check per request.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import random
from typing import Any, ClassVar, Literal

from sandbox import admin, connect, exposition, portforward, registryapi, verbs
from sandbox.cluster import Cluster
from sandbox.deprecations import DeprecatedVersion, release_of, to_served, to_storage
from sandbox.discovery import AGGREGATED_CONTENT_TYPE, wants_aggregated
from sandbox.errors import ApiError, BadRequest, InternalError, NotFound, TooManyRequests
from sandbox.http import (
    JSON,
    Message,
    Receive,
    Request,
    Scope,
    Send,
    dumps,
    parse_bool,
    respond,
    with_warnings,
)
from sandbox.impersonation import impersonate
from sandbox.rbac import Attributes, forbidden
from sandbox.routing import NOT_FOUND_MESSAGE, Route, route
from sandbox.timeframe import TimeFrame
from sandbox.version import version_info
from sandbox.watch import Streams

log = logging.getLogger("sandbox")

TICK = 0.05  # real seconds between beats of the simulated cluster
STEP_S = 0.01  # real seconds a step of the controllers runs before requests get their turn
YIELDS = 8  # turns of the event loop the requests get between two steps of a busy cluster


class App:
    def __init__(self, cluster: Cluster, *, server_address: str = "127.0.0.1:6443") -> None:
        self.cluster = cluster
        self.server_address = server_address
        self._heartbeat: asyncio.Task[None] | None = None
        self.loop: asyncio.AbstractEventLoop | None = None  # set at startup; see Sandbox.call
        self.streams = Streams()
        self.faults_random = random.Random(cluster.world.seed)  # which requests misbehave
        self.registries = registryapi.RegistryApi(cluster)  # the world's registries, read-only
        self.timeframe = TimeFrame(cluster.clock)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)
        elif scope["type"] == "websocket":
            await self._websocket(scope, receive, send)

    # -- lifespan: the cluster's heartbeat runs controllers and finishes deletions ---------------

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self.loop = asyncio.get_running_loop()
                self._heartbeat = asyncio.create_task(self._tick_forever())
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self._heartbeat is not None:
                    self._heartbeat.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await self._heartbeat
                await send({"type": "lifespan.shutdown.complete"})
                return

    def close_streams(self) -> None:
        """End every watch and log follow now (called on the server's loop before shutdown)."""
        self.streams.close_all()

    async def _tick_forever(self) -> None:
        busy = False
        while True:
            # With work left over (a step stops after STEP_S), let the requests in flight go
            # `YIELDS` steps of their own before the next one (a request takes several: read,
            # authorize, answer, write); otherwise rest until the next beat. A busy 50,000-pod
            # cluster stepping 50 ms at a time with one turn between answered an empty list in
            # half a second.
            if busy:
                for _ in range(YIELDS):
                    await asyncio.sleep(0)
            else:
                await asyncio.sleep(TICK)
            try:
                self.cluster.tick(budget=STEP_S)
                busy = self.cluster.control.pending() > 0
            except Exception:  # the heartbeat must survive one bad object
                log.exception("a tick of the simulated cluster failed")
                busy = False

    # -- requests ------------------------------------------------------------------------------

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = True
            await send(message)

        answer: Send = tracking_send
        try:
            request = await Request.read(scope, receive)
            if registryapi.is_registry_path(request.path):  # a registry of its own: no kube auth
                scheme = str(scope.get("scheme") or "https")
                await self.registries.serve(request, tracking_send, scheme=scheme)
                return
            answer = with_warnings(tracking_send, request.warnings)
            if self.timeframe.shown_to(request.headers):
                request.inbound = self.timeframe.inbound
                anchored = self._wall_anchored(answer, scope.get("client"))
                await self._serve(request, receive, anchored)
            else:
                await self._serve(request, receive, answer)
        except ApiError as exc:
            if not started:
                await respond(answer, exc.code, dumps(exc.status()))
        except Exception:
            log.exception("unhandled error serving %s %s", scope.get("method"), scope.get("path"))
            if not started:
                error = InternalError(
                    "an internal error occurred in the kubecrew sandbox; the server log has "
                    "the details"
                )
                await respond(send, 500, dumps(error.status()))

    def _wall_anchored(self, send: Send, connection: object) -> Send:
        """`send`, with the stamps of every JSON body it carries moved onto the wall clock by
        the connection's shift; logs and other text go as they are."""
        frame, json = self.timeframe, False
        shift = frame.shift_for(connection)

        async def anchored(message: Message) -> None:
            nonlocal json
            if message["type"] == "http.response.start":
                types = [v for k, v in message.get("headers", ()) if k == b"content-type"]
                json = any(b"json" in t for t in types)
            elif json and message["type"] == "http.response.body" and message.get("body"):
                message = {**message, "body": frame.outbound(message["body"], shift())}
            await send(message)

        return anchored

    async def _serve(self, request: Request, receive: Receive, send: Send) -> None:
        cluster = self.cluster
        user = cluster.authn.authenticate(
            request.headers.get("authorization"), now=cluster.clock.now()
        )
        user = impersonate(user, request.headers, cluster.authz)
        if admin.is_admin_path(request.path):
            await admin.serve(cluster, request, user, send)
            return
        watch = parse_bool(request.query.get("watch"), name="watch")
        cluster.registry.follow(cluster.world.control_plane_version)
        target = route(request.method, request.path, registry=cluster.registry, watch=watch)
        if cluster.world.api.any() and target.endpoint not in ("version", "health"):
            outcome = await self._misbehave(target, send)
            if isinstance(outcome, CutWatch):
                receive, send = outcome.bind(receive).receive, outcome.send
            elif outcome == "answered":
                return
        self._authorize(user, target, request)
        if target.subresource in connect.STREAMING:  # not an upgrade: kubectl's SPDY fallback
            connect.refuse_spdy(cluster, target, request.query)
        if target.subresource == portforward.SUBRESOURCE:
            portforward.refuse_spdy(cluster, target)
        if target.endpoint == "resource":
            send = self._in_requested_version(target, request, send)
            exchange = verbs.Exchange(cluster, target, request, user, receive, send, self.streams)
            await verbs.serve(exchange)
        else:
            await self._non_resource(target, request, send)

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        accepted = False

        async def tracking_send(message: Message) -> None:
            nonlocal accepted
            accepted = accepted or message["type"] == "websocket.accept"
            await send(message)

        try:
            request = await Request.read(scope, receive)
            cluster = self.cluster
            user = cluster.authn.authenticate(
                request.headers.get("authorization"), now=cluster.clock.now()
            )
            user = impersonate(user, request.headers, cluster.authz)
            cluster.registry.follow(cluster.world.control_plane_version)
            target = route("GET", request.path, registry=cluster.registry, watch=False)
            forwarding = target.subresource == portforward.SUBRESOURCE
            if target.subresource not in connect.STREAMING and not forwarding:
                raise BadRequest(f"{request.path} cannot be reached over a WebSocket")
            self._authorize(user, target, request)
            # kube-apiserver also asks for `create` before upgrading a WebSocket to a stream.
            self._authorize(user, dataclasses.replace(target, verb="create"), request)
            if forwarding:
                await portforward.serve(cluster, target, scope, receive, tracking_send)
            else:
                await connect.serve(cluster, target, scope, receive, tracking_send)
        except ApiError as exc:
            if not accepted:
                await connect.deny(send, exc)
        except Exception:
            log.exception("unhandled error serving the WebSocket %s", scope.get("path"))
            if not accepted:
                error = InternalError(
                    "an internal error occurred in the kubecrew sandbox; the server log has "
                    "the details"
                )
                await connect.deny(send, error)

    def _in_requested_version(self, target: Route, request: Request, send: Send) -> Send:
        """`send` for a resource request; for a deprecated version, also its warning and record
        (once the control plane deprecates it) and its bodies converted in and out."""
        assert target.rt is not None
        cluster, rt = self.cluster, target.rt
        served = cluster.registry.deprecation(target.group, target.version, rt.plural)
        if served is None:
            return send
        if served.warned_at(release_of(cluster.world.control_plane_version)):
            request.warnings.append(served.warning(rt.kind))
            cluster.metrics.deprecated_requests.record(served, rt.plural, target.subresource)
        before = request.inbound

        def inbound(value: Any) -> Any:
            return to_storage(value if before is None else before(value), served)

        request.inbound = inbound
        return _answering_in(served, send)

    def _authorize(self, user: Any, target: Route, request: Request) -> None:
        if target.endpoint == "resource":
            assert target.rt is not None
            attrs = Attributes(
                user=user,
                verb=target.verb,
                namespace=target.namespace,
                api_group=target.rt.group,
                resource=target.rt.plural,
                subresource=target.subresource,
                name=target.name,
            )
        else:
            attrs = Attributes(user=user, verb="get", path=request.path)
        decision = self.cluster.authz.authorize(attrs)
        if not decision.allowed:
            raise forbidden(attrs, reason=decision.reason)

    async def _non_resource(self, target: Route, request: Request, send: Send) -> None:
        cluster = self.cluster
        accept = request.headers.get("accept", "")
        body: Any
        content_type = "application/json"
        if target.endpoint == "version":
            body = version_info(cluster.world.control_plane_version)
        elif target.endpoint == "health":
            await respond(send, 200, b"ok", content_type="text/plain; charset=utf-8")
            return
        elif target.endpoint == "metrics":
            text = exposition.render_api_server(cluster).encode()
            await respond(send, 200, text, content_type=exposition.CONTENT_TYPE)
            return
        elif target.endpoint in ("api", "apis") and wants_aggregated(accept):
            body = cluster.discovery.aggregated(core=target.endpoint == "api")
            content_type = AGGREGATED_CONTENT_TYPE
        elif target.endpoint == "api":
            body = cluster.discovery.core_versions(self.server_address)
        elif target.endpoint == "apis":
            body = cluster.discovery.groups()
        elif target.endpoint == "group":
            body = cluster.discovery.group(target.group)
        elif target.endpoint == "resources":
            body = cluster.discovery.resources(target.group, target.version)
        elif target.endpoint == "openapi-root":
            body = cluster.openapi.root()
        elif target.endpoint == "openapi":
            body = cluster.openapi.document(target.path)
        else:  # openapi-v2: kubectl validates with it what v3 cannot vouch for (a `kind: List`)
            rendering = cluster.openapi_v2.render(accept)
            await respond(
                send,
                200,
                rendering.body,
                content_type=rendering.content_type,
                extra_headers={"ETag": rendering.etag},
            )
            return
        if body is None:
            raise NotFound(NOT_FOUND_MESSAGE)
        await respond(send, 200, dumps(body), content_type=content_type)

    # -- API faults ----------------------------------------------------------------------------

    async def _misbehave(self, target: Route, send: Send) -> Literal["answered"] | CutWatch | None:
        """Answer with an injected failure ("answered"), cut a watch short (a CutWatch wrapping the
        stream), or let the request through (None), as the world's API faults draw it."""
        api, draw = self.cluster.world.api, self.faults_random.random
        if api.error_rate and draw() < api.error_rate:
            error: ApiError = InternalError(
                "Internal error occurred: injected by a sandbox API fault (error_rate)"
            )
            await respond(send, error.code, dumps(error.status()))
            return "answered"
        if api.throttle_rate and draw() < api.throttle_rate:
            error = TooManyRequests("Too many requests, please try again later.", retry_after=1)
            headers = {"Retry-After": "1"}
            await respond(send, error.code, dumps(error.status()), extra_headers=headers)
            return "answered"
        if api.timeout_rate and draw() < api.timeout_rate:
            error = Timeout(
                "Timeout: request did not complete within the allotted timeout "
                "(injected by a sandbox API fault)",
                retry_after=1,
            )
            await respond(send, error.code, dumps(error.status()))
            return "answered"
        if target.verb == "watch" and api.drop_watch_rate and draw() < api.drop_watch_rate:
            return CutWatch(send)
        return None


def _answering_in(served: DeprecatedVersion, send: Send) -> Send:
    """`send`, with the objects of each JSON answer in the deprecated version asked for. A whole
    answer's start waits for its body, whose length the conversion changes; a stream's does not
    (its chunks carry no length)."""
    held: Message | None = None

    async def answering(message: Message) -> None:
        nonlocal held
        if message["type"] == "http.response.start":
            sized = any(name == b"content-length" for name, _ in message.get("headers", ()))
            if sized:
                held = message
                return
        elif message["type"] == "http.response.body":
            body = to_served(message.get("body", b""), served)
            message = {**message, "body": body}
            if held is not None:
                headers = [(k, v) for k, v in held.get("headers", ()) if k != b"content-length"]
                headers.append((b"content-length", str(len(body)).encode()))
                await send({**held, "headers": headers})
                held = None
        await send(message)

    return answering


class Timeout(ApiError):
    """504: the request outlived its deadline (only API faults produce it in the sandbox)."""

    code: ClassVar[int] = 504
    reason: ClassVar[str] = "Timeout"


class CutWatch:
    """A watch stream that ends after its first event, as when a connection drops mid-watch.

    `send` passes the response through until the first event, then ends the body; `receive`
    then reports the client gone, so the watch itself stops as it does on a real disconnect.
    """

    def __init__(self, send: Send) -> None:
        self._send = send
        self._receive: Receive | None = None
        self._cut = asyncio.Event()
        self._json = True

    def bind(self, receive: Receive) -> CutWatch:
        self._receive = receive
        return self

    async def send(self, message: Message) -> None:
        if self._cut.is_set():
            return
        if message["type"] == "http.response.start":
            for name, value in message.get("headers", ()):
                if name == b"content-type":
                    self._json = value.split(b";")[0].strip() == JSON.encode()
        body = message.get("body", b"") if message["type"] == "http.response.body" else b""
        if not body:
            await self._send(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                self._cut.set()
            return
        if self._json and b"\n" in body:  # newline-delimited JSON: keep exactly one event
            body = body.split(b"\n", 1)[0] + b"\n"
        await self._send({"type": "http.response.body", "body": body, "more_body": True})
        await self._send({"type": "http.response.body", "body": b"", "more_body": False})
        self._cut.set()

    async def receive(self) -> Message:
        assert self._receive is not None
        if self._cut.is_set():
            return {"type": "http.disconnect"}
        receiving = asyncio.ensure_future(self._receive())
        cutting = asyncio.ensure_future(self._cut.wait())
        try:
            await asyncio.wait({receiving, cutting}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (receiving, cutting):
                if not task.done():
                    task.cancel()
        if receiving.done() and not receiving.cancelled():
            return receiving.result()
        return {"type": "http.disconnect"}
