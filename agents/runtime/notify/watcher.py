"""The watcher: the sources, the desk and the receiver, run together until stopped.

`watch(plan, handler)` opens the watcher's own tool sessions (role `notify`: `watch_events` and
`diagnose` only, see AGENTS.md beside this file), the incident store, and runs a Kubernetes watch
per namespace, a patrol every `every_s` seconds and, with a port, the Alertmanager receiver, all
feeding one desk. It returns when `stop` is set (tests, embedding) or is cancelled (Ctrl-C); the
receiver is shut down gracefully either way, so its port is free again when `watch` returns.

`resume` (the healer's `resume_answered`) runs after each patrol pass, so a heal that waits for
a person carries on once the request is answered; with the patrol off it runs every
`RESUME_S` seconds on its own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from agents.runtime.notify import alertmanager, sources
from agents.runtime.notify.desk import Desk, Handler, Say
from agents.runtime.notify.incidents import default_path, open_incidents
from agents.runtime.roles import load_role
from agents.runtime.toolbox import Servers, Toolbox, open_toolbox
from mcp_servers.common.transport import LOOPBACK

ROLE = "notify"
RESUME_S = 30.0
Resume = Callable[[Desk], Awaitable[None]]
ROLES_DIR = Path(__file__).resolve().parent.parent  # agents/runtime: notify/AGENTS.md


@dataclass(frozen=True)
class WatchPlan:
    servers: Servers  # kube at least: both cluster sources are its tools
    namespaces: tuple[str, ...] = ()  # empty: the whole cluster
    every_s: float | None = 300.0  # the patrol's period; None: no patrol
    alertmanager_port: int | None = None  # None: no receiver
    alertmanager_host: str = LOOPBACK  # where the receiver listens (0.0.0.0 in a pod)
    token: str = ""  # the receiver's bearer token (required with a port)
    wait_s: int = 10  # how long each watch call waits for the next event
    incidents: Path = field(default_factory=default_path)
    take_over: bool = False  # also handle, once, the incidents an earlier watcher left open


async def watch(
    plan: WatchPlan,
    handler: Handler,
    *,
    say: Say,
    stop: anyio.Event | None = None,
    resume: Resume | None = None,
) -> None:
    if plan.alertmanager_port is not None and not plan.token:
        raise ValueError("the Alertmanager receiver needs a bearer token")
    store = open_incidents(plan.incidents)
    try:
        async with (
            open_toolbox(load_role(ROLE, root=ROLES_DIR), plan.servers) as toolbox,
            anyio.create_task_group() as handlers,
        ):
            desk = Desk(store, handler, handlers, say, takes_over=plan.take_over)
            await _run(plan, toolbox, desk, stop or anyio.Event(), resume)
            handlers.cancel_scope.cancel()  # stopping: a diagnosis under way is abandoned
    finally:
        store.close()


async def _run(
    plan: WatchPlan, toolbox: Toolbox, desk: Desk, stop: anyio.Event, resume: Resume | None
) -> None:
    """The receiver serves until the sources stop, then shuts down gracefully (its socket is
    closed before `watch` returns); the sources are simply cancelled."""
    receiver = None
    if plan.alertmanager_port is not None:
        receiver = alertmanager.server(
            desk, plan.token, port=plan.alertmanager_port, host=plan.alertmanager_host
        )
    async with anyio.create_task_group() as serving:
        if receiver is not None:
            serving.start_soon(receiver.serve)
        try:
            async with anyio.create_task_group() as sourcing:
                after = None if resume is None else _after_pass(resume, desk)
                for scope in sources.scopes(plan.namespaces):
                    sourcing.start_soon(_watch, toolbox, desk, scope, plan.wait_s)
                    if plan.every_s:
                        sourcing.start_soon(_patrol, toolbox, desk, scope, plan.every_s, after)
                if after is not None and not plan.every_s:
                    sourcing.start_soon(_resuming, desk, after)
                desk.say(_started(plan))
                await stop.wait()
                sourcing.cancel_scope.cancel()
        finally:
            if receiver is not None:
                receiver.should_exit = True


async def _watch(toolbox: Toolbox, desk: Desk, scope: str | None, wait_s: int) -> None:
    await sources.watch(toolbox, desk, scope, wait_s=wait_s)


async def _patrol(
    toolbox: Toolbox,
    desk: Desk,
    scope: str | None,
    every_s: float,
    after: sources.AfterPass | None,
) -> None:
    await sources.patrol(toolbox, desk, scope, every_s=every_s, after_pass=after)


def _after_pass(resume: Resume, desk: Desk) -> sources.AfterPass:
    async def after() -> None:
        await resume(desk)

    return after


async def _resuming(desk: Desk, after: sources.AfterPass) -> None:
    while True:
        await sources.after(desk.say, after)
        await anyio.sleep(RESUME_S)


def _started(plan: WatchPlan) -> str:
    where = ", ".join(plan.namespaces) or "the whole cluster"
    parts = [f"watching {where} for Warning events"]
    if plan.every_s:
        parts.append(f"patrolling every {plan.every_s:g} s")
    if plan.alertmanager_port is not None:
        where = f"{plan.alertmanager_host}:{plan.alertmanager_port}"
        parts.append(f"Alertmanager webhook on http://{where}/")
    return "; ".join(parts)
