"""The desk: where every signal lands, and the one place that calls the handler.

Each source hands its signals to `Desk.take`. The desk records them (`incidents`), and for news
(a new incident, or one back after it was resolved) starts the handler in its own task, so a
diagnosis that takes seconds never stops the sources, and the signals that keep coming in
meanwhile are merged into the incident being handled. A desk that `takes_over` (a healing
watcher's) also handles, once, each incident an earlier watcher left open: `watch --heal` heals
what a `watch` without it only diagnosed. A handler that fails is logged and leaves the
incident open: the watcher outlives a bad diagnosis.

An incident resolved by anyone (an alert that says so, the patrol finding the workload healthy
after `kubecrew heal` or a person fixed it, the handler itself) is announced to `on_resolved`,
in a task of its own, so whatever shows incidents elsewhere (a Slack message) says so too. A
handler that shows incidents itself says it by having a `resolved` method (`Resolving`): the
desk then tells it without the watcher wiring the hook twice.

Being the one place handlers are called, the desk is where incidents are counted
(`kubecrew_incidents_opened_total` by source; `kubecrew_incidents_handled_total` by the agent
that answered, `HandlerResult.agent`, and how it ended: healed, open, waiting, failed) and where
each handling is one span (`handle_incident`), so the agent's graph, its tool calls and the
lines said meanwhile share its trace. A handler that may fail before it answers names its
agent with an `agent` attribute.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import anyio.abc

from agents.runtime.notify.incidents import Incident, Incidents
from agents.runtime.notify.signals import Signal
from core import telemetry
from core.telemetry import metrics


@dataclass(frozen=True)
class HandlerResult:
    answer: str  # what the handler found or did, for the log
    resolved: bool = False  # True: the handler fixed it (and validated the fix)
    agent: str = ""  # the agent that handled it (dev_team), for the metrics


Handler = Callable[[Incident], Awaitable[HandlerResult]]
Say = Callable[[str], None]
Resolved = Callable[[Incident, str], Awaitable[None]]  # the incident as resolved, and why


@runtime_checkable
class Resolving(Protocol):
    """A handler that also wants to hear when an incident is resolved, by whomever."""

    async def __call__(self, incident: Incident) -> HandlerResult: ...

    async def resolved(self, incident: Incident, why: str) -> None: ...


class Desk:
    def __init__(
        self,
        incidents: Incidents,
        handler: Handler,
        tasks: anyio.abc.TaskGroup,
        say: Say,
        *,
        on_resolved: Resolved | None = None,
        takes_over: bool = False,
    ) -> None:
        self.incidents = incidents
        self.handler = handler
        self.tasks = tasks
        self.say = say
        if on_resolved is None and isinstance(handler, Resolving):
            on_resolved = handler.resolved
        self.on_resolved = on_resolved
        self.takes_over = takes_over
        self._taken: set[str] = set()  # the incidents this desk has handled

    async def take(self, signal: Signal) -> Incident | None:
        """Record a signal; a resolved-alert signal resolves its incident instead."""
        if not signal.firing:
            self.resolve(signal.fingerprint, why=f"{signal.source} says it is resolved")
            return self.incidents.get(signal.fingerprint)
        if not signal.name:
            return None  # an event about nothing we can name cannot be merged or handled
        incident, news = self.incidents.record(signal)
        if news:
            metrics.incident_opened(signal.source)
            again = f" (again, {incident.opened} times)" if incident.opened > 1 else ""
            self.say(f"incident opened{again}: {incident.subject} [{signal.source}]")
            self.incidents.set_state(incident.fingerprint, "handling")
        elif self._takes_over(incident):
            self.say(f"incident still open from before: {incident.subject} [{signal.source}]")
        else:
            return incident
        self._taken.add(incident.fingerprint)
        self.tasks.start_soon(self._handle, incident)
        return incident

    def _takes_over(self, incident: Incident) -> bool:
        """Whether this desk handles an incident that is not news: one left open before it
        started (not one it handled, one being handled elsewhere, or one waiting for a person)."""
        if not self.takes_over or incident.fingerprint in self._taken:
            return False
        return self.incidents.take_open(incident.fingerprint)

    def resolve(self, fingerprint: str, *, why: str) -> None:
        if self.incidents.resolve(fingerprint):
            incident = self.incidents.get(fingerprint)
            subject = incident.subject if incident else fingerprint
            self.say(f"incident resolved: {subject} ({why})")
            if incident is not None and self.on_resolved is not None:
                self.tasks.start_soon(self._announce, self.on_resolved, incident, why)

    async def _announce(self, hook: Resolved, incident: Incident, why: str) -> None:
        try:
            await hook(incident, why)
        except Exception as exc:  # showing it elsewhere must not end the watcher
            self.say(f"announcing {incident.subject} resolved failed: {exc}")

    async def _handle(self, incident: Incident) -> None:
        with telemetry.span("handle_incident", _attributes(incident)) as current:
            try:
                result = await self.handler(incident)
            except Exception as exc:  # one failed handling must not end the watcher
                telemetry.failed(current, type(exc).__qualname__, str(exc))
                self.say(f"handling {incident.subject} failed: {exc}")
                self._settle(incident, "open")
                metrics.incident_handled(getattr(self.handler, "agent", ""), "failed")
                return
            self.say(f"handled {incident.subject}:\n{result.answer}")
            self._settle(incident, "resolved" if result.resolved else "open")
            metrics.incident_handled(
                result.agent or getattr(self.handler, "agent", ""), self._ended(incident, result)
            )

    def _ended(self, incident: Incident, result: HandlerResult) -> str:
        if result.resolved:
            return "healed"
        current = self.incidents.get(incident.fingerprint)
        return "waiting" if current is not None and current.state == "waiting" else "open"

    def _settle(self, incident: Incident, state: str) -> None:
        current = self.incidents.get(incident.fingerprint)
        if current is None or current.state != "handling":
            return  # resolved meanwhile (an alert said so): keep that
        if state == "resolved":
            self.resolve(incident.fingerprint, why="the handler fixed it")
        else:
            self.incidents.set_state(incident.fingerprint, "open")


def _attributes(incident: Incident) -> dict[str, str]:
    return {
        "kubecrew.incident.fingerprint": incident.fingerprint,
        "kubecrew.incident.finding": incident.finding,
        "kubecrew.incident.source": incident.source,
        "k8s.namespace.name": incident.namespace,
        "kubecrew.incident.kind": incident.kind,
        "kubecrew.incident.name": incident.name,
    }
