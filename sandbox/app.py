"""The ASGI application: authenticate, route, authorize, dispatch, and answer like kube-apiserver.

Every failure becomes a Kubernetes `Status` body with the right code; an unexpected exception is
logged with its traceback on the server side and answered with a 500 Status that says where to
look, never with a traceback on the wire. Long-running requests (watch, `logs -f`) stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from sandbox import verbs
from sandbox.cluster import Cluster
from sandbox.discovery import AGGREGATED_CONTENT_TYPE, wants_aggregated
from sandbox.errors import ApiError, InternalError, NotFound
from sandbox.http import Message, Receive, Request, Scope, Send, dumps, parse_bool, respond
from sandbox.impersonation import impersonate
from sandbox.rbac import Attributes, forbidden
from sandbox.routing import NOT_FOUND_MESSAGE, Route, route
from sandbox.watch import Streams

log = logging.getLogger("sandbox")

TICK = 0.05  # real seconds between beats of the simulated cluster
VERSION = {
    "major": "1",
    "minor": "37",
    "emulationMajor": "1",
    "emulationMinor": "37",
    "minCompatibilityMajor": "1",
    "minCompatibilityMinor": "36",
    "gitVersion": "v1.37.0",
    "gitCommit": "kubecrew-sandbox",
    "gitTreeState": "clean",
    "buildDate": "2026-12-01T00:00:00Z",
    "goVersion": "go1.25",
    "compiler": "gc",
    "platform": "linux/amd64",
}


class App:
    def __init__(self, cluster: Cluster, *, server_address: str = "127.0.0.1:6443") -> None:
        self.cluster = cluster
        self.server_address = server_address
        self._heartbeat: asyncio.Task[None] | None = None
        self.loop: asyncio.AbstractEventLoop | None = None  # set at startup; see Sandbox.call
        self.streams = Streams()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)

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
        while True:
            await asyncio.sleep(TICK)
            try:
                self.cluster.tick()
            except Exception:  # the heartbeat must survive one bad object
                log.exception("a tick of the simulated cluster failed")

    # -- requests ------------------------------------------------------------------------------

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = True
            await send(message)

        try:
            request = await Request.read(scope, receive)
            await self._serve(request, receive, tracking_send)
        except ApiError as exc:
            if not started:
                await respond(send, exc.code, dumps(exc.status()))
        except Exception:
            log.exception("unhandled error serving %s %s", scope.get("method"), scope.get("path"))
            if not started:
                error = InternalError(
                    "an internal error occurred in the kubecrew sandbox; the server log has "
                    "the details"
                )
                await respond(send, 500, dumps(error.status()))

    async def _serve(self, request: Request, receive: Receive, send: Send) -> None:
        cluster = self.cluster
        user = cluster.authn.authenticate(
            request.headers.get("authorization"), now=cluster.clock.now()
        )
        user = impersonate(user, request.headers, cluster.authz)
        watch = parse_bool(request.query.get("watch"), name="watch")
        target = route(request.method, request.path, registry=cluster.registry, watch=watch)
        self._authorize(user, target, request)
        if target.endpoint == "resource":
            exchange = verbs.Exchange(cluster, target, request, user, receive, send, self.streams)
            await verbs.serve(exchange)
        else:
            await self._non_resource(target, request, send)

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
            body = VERSION
        elif target.endpoint == "health":
            await respond(send, 200, b"ok", content_type="text/plain; charset=utf-8")
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
