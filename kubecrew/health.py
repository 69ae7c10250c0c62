"""Health and metrics endpoints of the crew's long-lived parts, on a port of their own.

A command that runs until stopped (`kubecrew watch`, `run`, `slack`, `mcp ...`) takes
`--health-port` (else `$KUBECREW_HEALTH_PORT`). Neither given, no health server starts: the
default on a laptop. The container image sets the variable, so every part run in the cluster
answers its kubelet's probes without a flag:

    GET /healthz   200 "ok" while the process runs (liveness)
    GET /readyz    200 "ready" once every check the command registered passes, else
                   503 "not ready: <the first failing check's reason>" (readiness)
    GET /metrics   the crew's Prometheus metrics in the text format (`core.telemetry.metrics`:
                   incidents, heals, fixes, policy decisions, safeguards, tool and model
                   calls, leadership; with the approvals waiting where the part registered
                   them), for a ServiceMonitor or a scrape annotation on the same port

A check is a function returning None when it passes, else its reason: one line saying what is
wrong and what to look at. Checks run in a thread of their own, at start and every few seconds,
never inside a probe's request: a slow API server makes the part unready, it never makes a
probe time out and the kubelet restart a process that is fine. The checks the parts share are
here: `kube_api` (the Kubernetes API answers `/version` through the kubeconfig the part uses),
`listening` (the part's own server accepts connections: the Alertmanager receiver, an MCP
server) and `once` (an event happened, such as a connection made).

The server binds loopback unless `$KUBECREW_HEALTH_HOST` names another address (the image names
0.0.0.0: the kubelet probes the pod's IP). It serves nothing but these three paths, and its
answers name no secret: a reason names a context, a host or a port; a metric's labels name
agents, servers, tools, actions and leases. It knows no command and no agent.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Annotated

import typer

PORT_ENV = "KUBECREW_HEALTH_PORT"
HOST_ENV = "KUBECREW_HEALTH_HOST"
LOOPBACK = "127.0.0.1"
EVERY_S = 5.0  # seconds between two rounds of checks
STARTING = "starting: the first checks have not finished"

Check = Callable[[], str | None]

HealthPortOption = Annotated[
    int | None,
    typer.Option(
        "--health-port",
        envvar=PORT_ENV,
        min=0,
        max=65535,
        help="Serve /healthz (alive), /readyz (its servers reachable) and /metrics "
        "(Prometheus) on this port, on "
        f"loopback unless ${HOST_ENV} names another address. [default: ${PORT_ENV}, else none]",
        show_default=False,
    ),
]


class HealthError(Exception):
    """The health server cannot start as asked; the message says what to change."""


class Health:
    """The checks of one process and, once started, the server answering with their verdict."""

    def __init__(self, checks: Sequence[Check] = (), *, every: float = EVERY_S) -> None:
        self._checks = list(checks)
        self._every = every
        self._stop = threading.Event()
        self._server: _Server | None = None
        self.reason: str | None = STARTING  # None: ready

    @property
    def url(self) -> str | None:
        """Where it serves; None when it does not."""
        if self._server is None:
            return None
        host, port = self._server.server_address[:2]
        return f"http://{_url_host(str(host))}:{port}"

    def start(self, port: int, *, host: str = LOOPBACK) -> None:
        try:
            server = _Server((host, port), _Handler)
        except OSError as exc:
            raise HealthError(
                f"cannot serve health endpoints on {host}:{port}: {exc.strerror or exc}; "
                f"choose a free port with --health-port, or unset ${PORT_ENV}"
            ) from exc
        server.health = self
        self._server = server
        threading.Thread(target=server.serve_forever, name="health", daemon=True).start()
        threading.Thread(target=self._checking, name="health-checks", daemon=True).start()

    def stop(self) -> None:
        self._stop.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def check(self) -> str | None:
        """One round: the first failing check's reason, or None when all pass."""
        for check in list(self._checks):
            try:
                reason = check()
            except Exception as exc:  # a broken check makes the part unready, never kills it
                reason = f"a readiness check failed: {type(exc).__name__}: {exc}"
            if reason is not None:
                return " ".join(reason.split())
        return None

    def _checking(self) -> None:
        while True:
            self.reason = self.check()
            if self._stop.wait(self._every):
                return


@contextmanager
def serving(
    port: int | None,
    checks: Sequence[Check] = (),
    *,
    environ: Mapping[str, str] = os.environ,
    every: float = EVERY_S,
) -> Iterator[Health]:
    """A Health with `checks`, serving on `port` for the block (not at all when `port` is None)
    and stopped after it. The address is said on stderr, once."""
    health = Health(checks, every=every)
    if port is not None:
        health.start(port, host=environ.get(HOST_ENV) or LOOPBACK)
        print(f"health: /healthz and /readyz on {health.url}", file=sys.stderr, flush=True)
    try:
        yield health
    finally:
        health.stop()


# --- checks ---------------------------------------------------------------------------------


def kube_api(kubeconfig: Path | None = None, context: str | None = None) -> Check:
    """Passes when the Kubernetes API answers `GET /version` through this kubeconfig (None:
    $KUBECONFIG or ~/.kube/config) and context (None: its current one)."""
    from core.connection import Clusters
    from core.errors import ToolError

    clusters = Clusters(kubeconfig=kubeconfig, default_context=context)
    where = f"kubeconfig {kubeconfig}" if kubeconfig else "the default kubeconfig"

    def check() -> str | None:
        try:
            clusters.api().get("/version")
        except ToolError as exc:
            return f"the Kubernetes API does not answer: {exc.message}"
        except Exception as exc:  # the kubeconfig cannot be read, names no such context, ...
            return f"the Kubernetes API cannot be reached through {where}: {exc}"
        return None

    return check


def listening(host: str, port: int, what: str) -> Check:
    """Passes when `host:port` accepts a TCP connection (an all-interfaces address is tried on
    loopback)."""
    target = LOOPBACK if host in ("0.0.0.0", "::", "") else host.strip("[]")

    def check() -> str | None:
        try:
            with socket.create_connection((target, port), timeout=1.0):
                return None
        except OSError as exc:
            return f"{what} does not accept connections on {target}:{port} ({exc.strerror or exc})"

    return check


def once(event: threading.Event, waiting: str) -> Check:
    """Passes once `event` is set; until then `waiting` is the reason."""
    return lambda: None if event.is_set() else waiting


# --- the server -----------------------------------------------------------------------------


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    health: Health


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    server_version = "kubecrew-health"
    sys_version = ""  # the Server header names no Python version

    def do_GET(self) -> None:
        path = self.path.partition("?")[0]
        if path == "/healthz":
            self._answer(200, "ok")
        elif path == "/readyz":
            reason = self.server.health.reason
            if reason is None:
                self._answer(200, "ready")
            else:
                self._answer(503, f"not ready: {reason}")
        elif path == "/metrics":
            from core.telemetry import exposition

            body, content_type = exposition()
            self._send(200, body, content_type)
        else:
            self._answer(404, "not found: this server answers /healthz, /readyz and /metrics")

    def _answer(self, status: int, text: str) -> None:
        self._send(status, (text + "\n").encode(), "text/plain; charset=utf-8")

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Silent: the kubelet probes every few seconds, which would drown the part's own log."""


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
