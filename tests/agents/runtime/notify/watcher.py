"""A watcher running as in production, in a thread of its own, observed through its store.

`Watcher` starts `agents.runtime.notify.watcher.watch` on an event loop in a background thread
(an anyio blocking portal) with a handler that only records what it was given, so the tests see
how many times an incident was handled; the incidents are read from the SQLite file with a
connection of the test's own, as a second process would.
"""

from __future__ import annotations

from contextlib import ExitStack

import anyio
from anyio.from_thread import start_blocking_portal

from agents.runtime.notify.desk import HandlerResult
from agents.runtime.notify.incidents import Incident, Incidents
from agents.runtime.notify.watcher import WatchPlan, watch


class Watcher:
    def __init__(self, plan: WatchPlan) -> None:
        self.plan = plan
        self.handled: list[Incident] = []
        self.lines: list[str] = []
        self._stack = ExitStack()

    async def _record(self, incident: Incident) -> HandlerResult:
        self.handled.append(incident)
        return HandlerResult(f"noted {incident.subject}")

    def start(self) -> Watcher:
        portal = self._stack.enter_context(start_blocking_portal())
        self._stop = portal.call(anyio.Event)
        self._portal = portal
        self._done = portal.start_task_soon(
            lambda: watch(self.plan, self._record, say=self.lines.append, stop=self._stop)
        )
        return self

    def stop(self) -> None:
        self._portal.call(self._stop.set)
        self._done.result(timeout=30)
        self._stack.close()

    def incidents(self) -> list[Incident]:
        store = Incidents(self.plan.incidents)
        try:
            return store.all()
        finally:
            store.close()
