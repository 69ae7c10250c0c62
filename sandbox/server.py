"""Running a sandbox: in-process for tests (`Sandbox` context manager) or as a server process.

A sandbox lives in a home directory that holds what a user needs to reach it and nothing they
must guard by hand: `kubeconfig` (admin, mode 0600), `credentials.json` (admin token and the
ServiceAccount token signing key, 0600), `tls/` when TLS is on, and the state file when none is
given elsewhere. `python -m sandbox.server --home DIR ...` runs one in the foreground; the kubecrew
CLI builds `up --detach`, `down` and `status` on top of that.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import logging
import os
import secrets
import signal
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TypeVar

import uvicorn

from sandbox import kubeconfig, scenario, tls
from sandbox.app import App
from sandbox.auth import new_token
from sandbox.clock import Clock
from sandbox.cluster import Cluster
from sandbox.websocket import WebSocketProtocol
from sandbox.world import World

T = TypeVar("T")
ABORT_AFTER_S = 0.3  # a stop waits this long for answers still being sent
ABORT_EVERY_S = 0.01  # how often a stopping server looks at its connections
log = logging.getLogger("sandbox")


@dataclass(frozen=True)
class Credentials:
    admin_token: str
    signing_key: bytes

    @classmethod
    def load_or_create(cls, home: Path) -> Credentials:
        path = home / "credentials.json"
        if path.exists():
            data = json.loads(path.read_text())
            return cls(data["admin_token"], bytes.fromhex(data["signing_key"]))
        made = cls(new_token(), secrets.token_bytes(32))
        kubeconfig.write(
            path,
            json.dumps({"admin_token": made.admin_token, "signing_key": made.signing_key.hex()}),
        )
        return made


@dataclass(frozen=True)
class Options:
    home: Path
    port: int = 0  # 0 picks a free port
    host: str = "127.0.0.1"
    state: Path | None = None
    nodes: int = 3
    use_tls: bool = True  # kubectl 1.37 sends no bearer token to a plain-http server
    history: int = 50_000  # changes kept for watch resumption; older resourceVersions get 410
    rate: float | None = None  # sandbox s per real s (10: ten times faster); None: scenario's or 1
    seed: int | None = None  # seeds every random choice of the simulation; None: scenario's or 0
    scenario: Path | None = None  # a scenario file (sandbox.scenario) applied at start


class Sandbox:
    """A sandbox API server on a background thread; `with Sandbox(home=...) as sb:` yields it.

    `sb.kubeconfig` is the admin kubeconfig path, `sb.url` the server URL, and `sb.call(fn)` runs
    `fn(cluster)` on the server's event loop (the only thread allowed to touch the cluster).
    """

    def __init__(self, options: Options) -> None:
        self.options = options
        self._server: _Uvicorn | None = None
        self._thread: threading.Thread | None = None
        self.cluster: Cluster | None = None
        self.app: App | None = None
        self.url = ""
        self.kubeconfig = options.home / "kubeconfig"

    def __enter__(self) -> Sandbox:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> None:
        sock, server, url = _prepare(self.options)
        self._server, self.url = server, url
        assert isinstance(server.config.app, App)
        self.app = server.config.app
        self.cluster = self.app.cluster
        self._thread = threading.Thread(
            target=server.run, kwargs={"sockets": [sock]}, name="sandbox-api", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 30
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the sandbox API server did not start; see the log above")
            time.sleep(0.01)

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            app, server = self.app, self._server
            server.should_exit = True
            if app is not None and app.loop is not None and not app.loop.is_closed():
                with contextlib.suppress(RuntimeError):  # the loop may be stopping already
                    app.loop.call_soon_threadsafe(app.close_streams)
                    app.loop.call_soon_threadsafe(server.wake)
            self._thread.join(timeout=10)
        if self.cluster is not None:
            self.cluster.close()
        self._server = None

    def call(self, fn: Callable[[Cluster], T]) -> T:
        assert self.app is not None and self.app.loop is not None and self.cluster is not None
        cluster = self.cluster

        async def run() -> T:
            try:
                return fn(cluster)
            finally:
                cluster.store.commit()

        return asyncio.run_coroutine_threadsafe(run(), self.app.loop).result(timeout=30)


class _Uvicorn(uvicorn.Server):
    """uvicorn's server, stopping as soon as it can: its loop looks for `should_exit` every
    tenth of a second and its shutdown sleeps a tenth more, and a TLS connection left idle in
    a client's pool holds the shutdown until the graceful timeout (its close waits for the
    peer's close_notify, which the pool never sends). Every test's sandbox stop paid for that
    (0.3 s measured); now a stop is seen at once (`wake`), each connection closed for being
    idle is aborted as soon as nothing of it is left to send, and the rest after
    ABORT_AFTER_S."""

    _woken: asyncio.Event | None = None

    async def main_loop(self) -> None:
        self._woken = asyncio.Event()
        counter = 0
        while not await self.on_tick(counter):
            counter = (counter + 1) % 864000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._woken.wait(), 0.1)

    def wake(self) -> None:
        """On the server's loop: look at `should_exit` now."""
        if self._woken is not None:
            self._woken.set()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        state = self.server_state
        for connection in list(state.connections):
            connection.shutdown()  # idle: closed; answering: closed once answered
        loop = asyncio.get_running_loop()
        started, limit = loop.time(), self.config.timeout_graceful_shutdown
        while state.connections or state.tasks:
            waited = loop.time() - started
            if limit is not None and waited >= limit:
                for task in state.tasks:
                    task.cancel()
                break
            for connection in list(state.connections):
                transport = getattr(connection, "transport", None)
                if transport is not None and (
                    waited >= ABORT_AFTER_S
                    or (transport.is_closing() and not transport.get_write_buffer_size())
                ):
                    transport.abort()
            await asyncio.sleep(ABORT_EVERY_S)
        for server in self.servers:
            await server.wait_closed()
        if not self.force_exit:
            await self.lifespan.shutdown()


def _prepare(options: Options) -> tuple[socket.socket, _Uvicorn, str]:
    """Bind the socket, build the cluster and app, write the kubeconfig."""
    home = options.home
    home.mkdir(parents=True, exist_ok=True)
    credentials = Credentials.load_or_create(home)
    plan = _load_scenario(options)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((options.host, options.port))
    except OSError as exc:
        sock.close()
        raise SystemExit(
            f"cannot listen on {options.host}:{options.port}: {exc.strerror}; "
            "choose another port with --port (0 picks a free one)"
        ) from None
    port = sock.getsockname()[1]
    address = f"{options.host}:{port}"
    cert_file = key_file = None
    ca_pem = None
    if options.use_tls:
        material = tls.generate((options.host, "localhost"))
        _ca_path, cert_path, key_path = tls.write(material, home / "tls")
        cert_file, key_file = str(cert_path), str(key_path)
        ca_pem = material.ca_pem
    scheme = "https" if options.use_tls else "http"
    try:
        cluster = _cluster(options, credentials, plan)
    except SystemExit:
        sock.close()
        raise
    app = App(cluster, server_address=address)
    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="on",
        http="httptools",
        ws=WebSocketProtocol,
        loop="uvloop",
        access_log=False,
        timeout_graceful_shutdown=2,
        ssl_certfile=cert_file,
        ssl_keyfile=key_file,
    )
    url = f"{scheme}://{address}"
    kubeconfig.write(
        home / "kubeconfig",
        kubeconfig.render(server=url, token=credentials.admin_token, ca_pem=ca_pem),
    )
    return sock, _Uvicorn(config), url


def _load_scenario(options: Options) -> scenario.Scenario | None:
    if options.scenario is None:
        return None
    try:
        return scenario.load(options.scenario)
    except scenario.ScenarioError as exc:
        raise SystemExit(f"bad scenario: {exc}") from None


def _cluster(options: Options, credentials: Credentials, plan: scenario.Scenario | None) -> Cluster:
    """The cluster, shaped by the scenario when there is one (its clock, seed and nodes)."""
    clock = (
        plan.make_clock(rate=options.rate)
        if plan is not None
        else Clock(rate=1.0 if options.rate is None else options.rate)
    )
    world = (
        plan.make_world(seed=options.seed) if plan is not None else World(seed=options.seed or 0)
    )
    cluster = Cluster(
        admin_token=credentials.admin_token,
        signing_key=credentials.signing_key,
        state=options.state,
        nodes=0 if plan is not None and plan.nodes is not None else options.nodes,
        history=options.history,
        clock=clock,
        world=world,
    )
    if plan is not None:
        try:
            plan.apply(cluster)
        except scenario.ScenarioError as exc:
            cluster.close()
            raise SystemExit(f"the scenario could not be applied: {exc}") from None
    return cluster


# A 50,000-pod cluster keeps tens of millions of Python objects, and the kubelet's metrics and
# status writes keep adding long-lived ones: the interpreter's automatic full collections walked
# them all every few seconds, a third of the server's CPU at steady state. A process that only
# serves a sandbox collects the young generations as usual and the whole heap on a timer.
FULL_GC_S = 300.0


def serve(options: Options, *, on_ready: Callable[[str, Path], None] | None = None) -> None:
    """Run in the foreground until SIGINT/SIGTERM."""
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, 2**31 - 1)  # no automatic full collection
    collected = time.monotonic()
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    sandbox = Sandbox(options)
    sandbox.start()
    (options.home / "sandbox.pid").write_text(str(os.getpid()))
    (options.home / "url").write_text(sandbox.url)
    if on_ready is not None:
        on_ready(sandbox.url, sandbox.kubeconfig)
    try:
        while not stop.wait(0.5):
            if sandbox._thread is not None and not sandbox._thread.is_alive():
                break
            if time.monotonic() - collected > FULL_GC_S:
                gc.collect()
                collected = time.monotonic()
    finally:
        sandbox.stop()
        for leftover in ("sandbox.pid", "url"):
            with contextlib.suppress(FileNotFoundError):
                (options.home / leftover).unlink()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m sandbox.server", description="Run a kubecrew sandbox API server."
    )
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--state", type=Path)
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--rate", type=float, help="clock speed (10 = 10x) [default: 1]")
    parser.add_argument("--seed", type=int, help="seed of the simulation [default: 0]")
    parser.add_argument("--scenario", type=Path, help="a scenario file to start from")
    parser.add_argument(
        "--tls",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="serve HTTPS with a generated CA (default; kubectl sends no token over plain HTTP)",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(message)s")
    serve(
        Options(
            home=args.home,
            port=args.port,
            state=args.state,
            nodes=args.nodes,
            use_tls=args.tls,
            rate=args.rate,
            seed=args.seed,
            scenario=args.scenario,
        ),
        on_ready=lambda url, path: print(f"sandbox ready at {url}; KUBECONFIG={path}", flush=True),
    )


if __name__ == "__main__":
    main()
