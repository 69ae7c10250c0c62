"""The Alertmanager webhook receiver: alerts in, signals to the desk, behind a bearer token.

Alertmanager POSTs its webhook payload (version "4": groupKey, status, receiver, alerts[] each
with status, labels, annotations, startsAt, endsAt, fingerprint) to the URL of a
`webhook_configs` entry; its `http_config.authorization.credentials` sends the token this
receiver demands. The bearer check is the MCP HTTP transport's own `BearerAuth`, so the rule
(constant-time compare, 401 with a JSON body) is written once. Any path is accepted, since the
URL is the operator's to choose. A firing alert is a signal; a resolved one resolves its
incident. A payload that is not version 4 gets a 400 saying so, never a half-read.
"""

from __future__ import annotations

import json
from typing import Any

import uvicorn
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from agents.runtime.notify.desk import Desk
from agents.runtime.notify.signals import from_alert
from mcp_servers.common.transport import LOOPBACK, BearerAuth

MAX_BODY = 1_000_000


class _Receiver:
    def __init__(self, desk: Desk) -> None:
        self.desk = desk

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return  # lifespan: nothing to start or stop
        request = Request(scope, receive)
        if request.method != "POST":
            response = _error(405, "POST the Alertmanager webhook payload here")
        else:
            response = await self._accept(await request.body())
        await response(scope, receive, send)

    async def _accept(self, body: bytes) -> JSONResponse:
        if len(body) > MAX_BODY:
            return _error(413, f"payload over {MAX_BODY} bytes; lower group_by fan-out")
        try:
            payload = json.loads(body)
        except ValueError:
            return _error(400, "the body is not JSON; send Alertmanager's webhook payload")
        problem = _check(payload)
        if problem:
            return _error(400, problem)
        taken = 0
        for alert in payload["alerts"]:
            if await self.desk.take(from_alert(alert)) is not None:
                taken += 1
        return JSONResponse({"accepted": taken, "groupKey": payload.get("groupKey", "")})


def _check(payload: Any) -> str:
    if not isinstance(payload, dict) or str(payload.get("version")) != "4":
        return 'expected an Alertmanager webhook payload with "version": "4"'
    alerts = payload.get("alerts")
    if not isinstance(alerts, list) or not all(isinstance(a, dict) for a in alerts):
        return '"alerts" must be a list of alerts'
    for alert in alerts:
        if alert.get("status") not in ("firing", "resolved"):
            return 'each alert needs "status": "firing" or "resolved"'
        if not isinstance(alert.get("labels"), dict):
            return 'each alert needs its "labels"'
    return ""


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def receiver(desk: Desk, token: str) -> ASGIApp:
    return BearerAuth(_Receiver(desk), token)


def server(desk: Desk, token: str, *, port: int, host: str = LOOPBACK) -> uvicorn.Server:
    """A uvicorn server for the receiver; `await server.serve()`, stop with `should_exit`."""
    config = uvicorn.Config(
        receiver(desk, token),
        host=host,
        port=port,
        log_level="warning",
        lifespan="off",
        timeout_graceful_shutdown=2,
    )
    return uvicorn.Server(config)
