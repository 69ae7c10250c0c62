"""Triggers: each scenario's `trigger` through the entry point people (or timers, or
Alertmanager) use, under the scenario's budget.

- `ask`: a Dev Team conversation, as `kubecrew ask`; `heal`: the remediation loop, as
  `kubecrew heal`.
- `alert`: a version-4 webhook payload POSTed over HTTP to the watcher's own Alertmanager
  receiver (bearer token and all), its incidents on the watcher's desk and store, each new one
  healed as `kubecrew watch --heal` does.
- `schedule`: ticks of an agent's timer: the Cluster Operator's patrol (node health, readiness
  taints, maintenance in its window) or capacity review, the Platform agent's egress
  propagation, fleet audit, blueprint sync or answer to the escalations that name it, or the Dev
  Team watcher's patrol (`diagnose`, one incident per failing workload, healed).
- `chat` and `pr_comment`: a person speaking, at the front door or on the crew's PR
  (`kubecrew.evals.channels`).

A scenario's triggers (`trigger`, then each of `then`) run in order, each by its own agent under
the name the policies know it by (`Built.acting_as`), all within the one budget.

The budget is enforced here: a `Meter` counts every tool call as it is made and stops the run at
the first one over `tool_calls` or past its time (its sandbox seconds at the world's rate, or its
wall seconds, whichever is sooner), with a cancellation at twice that time as the backstop for an
agent that stops calling tools. What happened up to then is kept in the `Done` the drivers fill
as they go, so a stopped run is scored on what it did.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import httpx

from agents.cluster_operator.conversation import conversation as operator_conversation
from agents.dev_team.heal import heal
from agents.dev_team.incidents import WORKLOADS
from agents.dev_team.state import TargetRef
from agents.platform.conversation import conversation as platform_conversation
from agents.runtime import registry
from agents.runtime.brain import Planner
from agents.runtime.notify import alertmanager, sources
from agents.runtime.notify.desk import Desk, HandlerResult
from agents.runtime.notify.incidents import Incident, Incidents
from agents.runtime.notify.watcher import ROLE as WATCHER_ROLE
from agents.runtime.notify.watcher import ROLES_DIR as WATCHER_ROLES
from agents.runtime.roles import load_role
from agents.runtime.toolbox import CallRecord, Json, Toolbox, open_toolbox
from kubecrew.channels.frontdoor import route
from kubecrew.evals import channels
from kubecrew.evals.format import AlertTrigger, Budget, Schedule, Trigger
from kubecrew.evals.world import Built

TOKEN = "eval-receiver-token"  # the receiver's bearer token: a run's own, on loopback only


@dataclass
class Done:
    """What the trigger did so far: filled as it goes, read whether it finished or was stopped."""

    answers: list[str] = field(default_factory=list)
    outcome: str = ""  # the remediation loop's last outcome, when one ran
    toolboxes: list[Toolbox] = field(default_factory=list)  # their calls carry the errors
    seen: list[CallRecord] = field(default_factory=list)  # calls seen as made (errors unknown)
    stopped: str = ""  # why the budget stopped the run; "" when it ran to its end

    @property
    def calls(self) -> list[CallRecord]:
        return [*(c for box in self.toolboxes for c in box.calls), *self.seen]


class OverBudget(Exception):
    """Raised from inside a tool call's hook: the run spent its budget."""


class Meter:
    """Counts tool calls as they are made; the first one over the call budget, or past the time
    budget, raises OverBudget in the agent's own call path, so the agent unwinds as from any
    failed call and closes its sessions and checkpoints in order."""

    def __init__(self, done: Done, *, limit: int, deadline: float) -> None:
        self.done, self.limit, self.deadline, self.made = done, limit, deadline, 0

    def count(self, name: str, arguments: Json) -> None:
        self.made += 1
        if self.made > self.limit:
            self.stop(f"stopped at tool call {self.made} ({name}): the budget is {self.limit}")
        if anyio.current_time() > self.deadline:
            self.stop(f"stopped at tool call {self.made} ({name}): out of sandbox or wall time")

    def seeing(self, name: str, arguments: Json) -> None:
        """`count`, keeping the call: for entry points that keep their toolbox to themselves."""
        self.done.seen.append(CallRecord(name, dict(arguments), None))
        self.count(name, arguments)

    def stop(self, why: str) -> None:
        self.done.stopped = self.done.stopped or why
        raise OverBudget(why)


async def run(triggers: list[Trigger], world: Built, planner: Planner, budget: Budget) -> Done:
    """The triggers in order, within the budget: stopped (and said so in `stopped`) when they
    run over. An agent that makes no tool call for a while is cancelled at twice the time."""
    done = Done()
    seconds = min(budget.wall_seconds, budget.sandbox_seconds / world.rate)
    meter = Meter(done, limit=budget.tool_calls, deadline=anyio.current_time() + seconds)
    with anyio.move_on_after(2 * seconds) as scope:
        try:
            for trigger in triggers:
                await _drive(trigger, world.acting_as(trigger.agent), planner, meter)
        except* OverBudget:
            pass  # `done.stopped` says why; what it did until then is scored
    if scope.cancelled_caught and not done.stopped:
        done.stopped = f"cancelled after {2 * seconds:g} s without a tool call past its budget"
    return done


async def _drive(trigger: Trigger, world: Built, planner: Planner, meter: Meter) -> None:
    if trigger.ask is not None:
        await _ask(world, trigger.ask, trigger.namespace, planner, meter)
    elif trigger.heal is not None:
        await _heal(world, trigger.heal, planner, meter)
    elif trigger.alert is not None:
        await _alert(world, trigger.alert, planner, meter)
    elif trigger.chat is not None:
        answer = await channels.chat(world, trigger.chat, planner, on_call=meter.seeing)
        meter.done.answers.append(answer)
    elif trigger.pr_comment is not None:
        meter.done.answers.extend(channels.pr_comment(world, trigger.pr_comment))
    else:
        assert trigger.schedule is not None
        await _schedule(world, trigger.schedule, trigger.counters, planner, meter)


async def _ask(
    world: Built, question: str, namespace: str | None, planner: Planner, meter: Meter
) -> None:
    """The question to the agent the front doors send it to ("are we ready to upgrade?" to
    the Cluster Operator), as that agent."""
    agent = route(question) or "dev_team"
    found = registry.find(agent)
    if found is None:
        raise RuntimeError(f"the {agent} agent is not installed")
    acting = world.acting_as(agent)
    async with found.open(acting.servers, planner, home=acting.home, on_call=meter.count) as talk:
        meter.done.toolboxes.append(talk.toolbox)
        outcome = await talk.ask(question, namespace=namespace)
        meter.done.answers.append(outcome.answer)


async def _heal(world: Built, target: str | TargetRef, planner: Planner, meter: Meter) -> None:
    await _heal_target(world, target, None, planner, meter)


async def _heal_target(
    world: Built, target: str | TargetRef, incident: str | None, planner: Planner, meter: Meter
) -> str:
    result = await heal(
        target,
        incident=incident,
        servers=world.servers,
        planner=planner,
        home=world.home,
        on_call=meter.seeing,
    )
    meter.done.outcome = result.outcome
    meter.done.answers.append(result.summary)
    return result.outcome


def _healer(
    world: Built, planner: Planner, meter: Meter
) -> Callable[[Incident], Awaitable[HandlerResult]]:
    """The `kubecrew watch --heal` handler (agents.dev_team.incidents.heal_incident: the
    loop on the incident's workload, resolved when fixed or healthy), with the harness's
    planner and call meter, which that handler does not take."""

    async def handle(incident: Incident) -> HandlerResult:
        if incident.kind not in WORKLOADS:
            answer = f"{incident.subject}: {incident.summary} (not a workload)"
            meter.done.answers.append(answer)
            return HandlerResult(answer)
        target = TargetRef(kind=incident.kind, name=incident.name, namespace=incident.namespace)
        outcome = await _heal_target(world, target, incident.fingerprint, planner, meter)
        return HandlerResult(meter.done.answers[-1], resolved=outcome in ("fixed", "healthy"))

    return handle


async def _alert(world: Built, alert: AlertTrigger, planner: Planner, meter: Meter) -> None:
    """The payload POSTed `deliveries` times to a receiver on a loopback port of its own; every
    handler the desk started is waited for before the receiver's task group closes."""
    store = Incidents(world.incidents)
    try:
        async with anyio.create_task_group() as handling:
            desk = Desk(store, _healer(world, planner, meter), handling, say=lambda _: None)
            server = alertmanager.server(desk, TOKEN, port=0)
            async with anyio.create_task_group() as serving:
                serving.start_soon(server.serve)
                try:
                    await _deliver(server, _payload(alert), alert.deliveries)
                finally:
                    server.should_exit = True
    finally:
        store.close()


async def _deliver(server: Any, payload: Json, times: int) -> None:
    while not server.started:
        await anyio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    async with httpx.AsyncClient(timeout=10) as client:
        for _ in range(times):
            answer = await client.post(
                f"http://127.0.0.1:{port}/", content=json.dumps(payload), headers=headers
            )
            if answer.status_code != 200:
                raise RuntimeError(f"the receiver refused the payload: {answer.text}")


def _payload(alert: AlertTrigger) -> Json:
    """Alertmanager's webhook payload, version 4, for these alerts."""
    now = datetime.now(UTC).isoformat()
    alerts = [
        {
            "status": a.status,
            "labels": a.labels,
            "annotations": a.annotations,
            "startsAt": now,
            "endsAt": now if a.status == "resolved" else "0001-01-01T00:00:00Z",
            "generatorURL": "",
            "fingerprint": f"{index:016x}",
        }
        for index, a in enumerate(alert.alerts)
    ]
    firing = any(a.status == "firing" for a in alert.alerts)
    return {
        "version": "4",
        "groupKey": f'{{}}:{{alertname="{alert.alerts[0].labels["alertname"]}"}}',
        "truncatedAlerts": 0,
        "status": "firing" if firing else "resolved",
        "receiver": "kubecrew",
        "groupLabels": {},
        "commonLabels": {},
        "commonAnnotations": {},
        "externalURL": "",
        "alerts": alerts,
    }


async def _schedule(
    world: Built, schedule: Schedule, counters: Any, planner: Planner, meter: Meter
) -> None:
    for _ in range(schedule.ticks):
        if schedule.agent == "dev_team":
            await _watch_patrol(world, planner, meter)
        elif schedule.agent == "platform":
            await _platform(world, schedule.task, planner, meter)
        else:
            async with operator_conversation(
                world.servers, planner, home=world.home, on_call=meter.count, counters=counters
            ) as talk:
                meter.done.toolboxes.append(talk.toolbox)
                outcome = await getattr(talk, schedule.task)()
                meter.done.answers.append(outcome.answer)


async def _platform(world: Built, task: str, planner: Planner, meter: Meter) -> None:
    """A Platform timer: egress propagation, the fleet audit or the blueprint sync (each fixing
    what it may, by PR to the world's repository when a namespace comes from it), or the
    escalations it answers as the org's arbiter."""
    gitops = world.servers.gitops
    repos = {gitops.label_value: gitops} if gitops is not None else {}
    async with platform_conversation(
        world.servers, planner, repos=repos, home=world.home, on_call=meter.count
    ) as talk:
        # its repositories' gitops tools are toolboxes of their own: their calls (a PR, a
        # merge, a sync) belong to the record as much as the kube server's
        meter.done.toolboxes.extend([talk.toolbox, *talk.context.repos.values()])
        if task == "audit":
            outcome = await talk.audit()
        elif task == "blueprints":
            outcome = await talk.sync_blueprints()
        elif task == "escalations":
            outcome = await talk.answer_escalations()
        else:
            outcome = await talk.propagate()
        meter.done.answers.append(outcome.answer)


async def _watch_patrol(world: Built, planner: Planner, meter: Meter) -> None:
    """One pass of the watcher's patrol (agents.runtime.notify.sources.patrol itself, stopped
    as it starts its second pass), each incident it opens healed before this returns."""
    store = Incidents(world.incidents)
    passes = 0
    stop = anyio.CancelScope()

    def on_call(name: str, arguments: Json) -> None:
        nonlocal passes
        passes += name == "diagnose"
        if passes > 1:
            stop.cancel()  # the first pass has handed every finding to the desk
        else:
            meter.count(name, arguments)

    role = load_role(WATCHER_ROLE, root=WATCHER_ROLES)
    try:
        async with (
            open_toolbox(role, world.servers, on_call=on_call) as toolbox,
            anyio.create_task_group() as handling,
        ):
            meter.done.toolboxes.append(toolbox)
            desk = Desk(store, _healer(world, planner, meter), handling, say=lambda _: None)
            with stop:
                await sources.patrol(toolbox, desk, None, every_s=0)
    finally:
        store.close()


def incidents(path: Path) -> list[dict[str, Any]]:
    """The watcher's incidents at the end of a run, as the record keeps them."""
    if not path.exists():
        return []
    store = Incidents(path)
    try:
        return [
            {"subject": i.subject, "state": i.state, "count": i.count, "opened": i.opened}
            for i in store.all()
        ]
    finally:
        store.close()
