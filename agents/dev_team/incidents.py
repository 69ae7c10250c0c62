"""What the watcher does with a new incident: ask the Dev Team agent why, or let it heal.

`diagnose_with_dev_team` asks the Dev Team agent "why is NAME failing?" in a conversation of its
own (the agent's role, tools, memory and checkpoints, exactly as `kubecrew ask` does), so an
incident's diagnosis is the answer a person would get, and is remembered with the agent's other
incidents. It reads only.

`Healer` (and `heal_incident`, one loop run without its bookkeeping) hands the incident to the
remediation loop, `agents.dev_team.heal.heal`, which mutates only through its gates: the
servers must include the policy server (and gitops for git-managed workloads). The healer:

- runs at most `max_heals` loops at once, whatever their source: an incident beyond that waits
  for a free turn, and the log says so (a burst of ten failing workloads must not become ten
  concurrent rollouts);
- leaves an incident whose heal stopped for a person's approval `waiting`, remembering the
  request and the loop's thread in the incident store;
- on each patrol pass (`resume_answered`), asks the policy server's `claim_approval` about each
  waiting request, as the loop's own waiter: once the request has ended, the incident is taken
  up (once, `Incidents.take_up`) and the loop resumed on its thread, where its approval node
  carries on (granted) or escalates (denied, expired). The log says who answered.

Every handling names the Dev Team as its agent (`HandlerResult.agent`, `Healer.agent`) for the
desk's incident metrics; a heal resumed after its approval is counted here, where it ends.

`book` puts a heal a person ran (`kubecrew heal`) into the same incident book when it ends
with a person: waiting for an approval (the request, the thread and who may answer, so a
running watcher resumes it once answered) or escalated (open, for whoever takes it up); a
healed one resolves its incident. So `kubecrew status` shows what the run left behind.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, closing
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from agents.dev_team.state import AGENT
from agents.runtime.brain import Planner
from agents.runtime.errors import ToolFailed
from agents.runtime.notify.desk import Desk, Handler, HandlerResult, Say
from agents.runtime.notify.incidents import Incident, Wait, open_incidents
from agents.runtime.notify.signals import Signal
from agents.runtime.roles import load_role
from agents.runtime.toolbox import Servers, open_toolbox
from core.telemetry import metrics

if TYPE_CHECKING:
    from agents.runtime.loop.run import LoopResult
    from agents.runtime.loop.validation import LoopSettings

# What the healer takes: workloads, and the objects the loop heals on their own (a Service
# routing nowhere, a claim for a missing StorageClass).
WORKLOADS = {
    "Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "Pod", "Service",
    "PersistentVolumeClaim",
}  # fmt: skip
OnNode = Callable[[str], None]


def diagnose_with_dev_team(servers: Servers, planner: Planner, *, home: Path | None) -> Handler:
    async def handle(incident: Incident) -> HandlerResult:
        from agents.dev_team.conversation import conversation

        if incident.kind not in WORKLOADS:
            return HandlerResult(
                f"{incident.subject}: {incident.summary} (not a workload)", agent=AGENT
            )
        question = f"why is {incident.name} failing?"
        async with conversation(servers, planner, home=home) as talk:
            outcome = await talk.ask(question, namespace=incident.namespace or None)
        return HandlerResult(outcome.answer, agent=AGENT)

    return handle


async def heal_incident(
    incident: Incident,
    *,
    servers: Servers,
    home: Path | None = None,
    settings: LoopSettings | None = None,
    on_node: OnNode | None = None,
) -> HandlerResult:
    """The remediation loop on the incident's workload; resolved when the fix was validated
    (or the workload turned out healthy)."""
    if incident.kind not in WORKLOADS:
        return HandlerResult(
            f"{incident.subject}: {incident.summary} (not a workload)", agent=AGENT
        )
    outcome = await _heal(incident, servers=servers, home=home, settings=settings, on_node=on_node)
    return HandlerResult(
        outcome.summary, resolved=outcome.outcome in ("fixed", "healthy"), agent=AGENT
    )


async def _heal(
    incident: Incident,
    *,
    servers: Servers,
    home: Path | None,
    settings: LoopSettings | None,
    planner: Planner | None = None,
    on_node: OnNode | None = None,
    resume: Wait | None = None,
) -> LoopResult:
    from agents.dev_team.heal import heal
    from agents.dev_team.state import TargetRef

    target = TargetRef(kind=incident.kind, name=incident.name, namespace=incident.namespace)
    return await heal(
        target,
        incident=incident.fingerprint,
        servers=servers,
        planner=planner,
        home=home,
        settings=settings,
        on_node=on_node,
        thread=resume.thread if resume else None,
        resume="answered" if resume else None,
    )


class Healer:
    """The watcher's heal handler (see the module docstring); `stepped` for handlers that follow
    the loop's nodes (the Slack incident messages)."""

    agent = AGENT  # the desk's metrics name it, even for a heal that failed

    def __init__(
        self,
        servers: Servers,
        *,
        incidents: Path,
        planner: Planner | None = None,
        home: Path | None = None,
        settings: LoopSettings | None = None,
        max_heals: int = 2,
        say: Say | None = None,
    ) -> None:
        if max_heals < 1:
            raise ValueError("max_heals must be at least 1")
        self.servers = servers
        self.incidents = incidents
        self.planner = planner
        self.home = home
        self.settings = settings
        self.max_heals = max_heals
        self.say: Say = say or (lambda _line: None)
        self._slots: anyio.Semaphore | None = None  # made on first use, inside the event loop

    async def __call__(self, incident: Incident) -> HandlerResult:
        return await self.stepped(incident, None)

    async def stepped(self, incident: Incident, on_node: OnNode | None) -> HandlerResult:
        if incident.kind not in WORKLOADS:
            return HandlerResult(
                f"{incident.subject}: {incident.summary} (not a workload)", agent=AGENT
            )
        async with self._turn(incident):
            outcome = await self._run(incident, on_node=on_node)
        return self._settled(incident, outcome)

    async def _run(
        self, incident: Incident, *, on_node: OnNode | None = None, resume: Wait | None = None
    ) -> LoopResult:
        return await _heal(
            incident,
            servers=self.servers,
            home=self.home,
            settings=self.settings,
            planner=self.planner,
            on_node=on_node,
            resume=resume,
        )

    @asynccontextmanager
    async def _turn(self, incident: Incident) -> AsyncIterator[None]:
        if self._slots is None:
            self._slots = anyio.Semaphore(self.max_heals)
        if self._slots.value == 0:
            self.say(
                f"{incident.subject} waits its turn: {self.max_heals} heal(s) under way "
                "(--max-heals)"
            )
        async with self._slots:
            yield

    def _settled(self, incident: Incident, outcome: LoopResult) -> HandlerResult:
        """The handler's result; a run stopped for a person leaves its incident waiting."""
        if not outcome.finished and outcome.waiting_for:
            with closing(open_incidents(self.incidents)) as store:
                store.wait(
                    incident.fingerprint,
                    request=outcome.waiting_for,
                    thread=outcome.thread,
                    asked=outcome.asked,
                )
            return HandlerResult(
                f"waiting for approval {outcome.waiting_for}: {outcome.asked}\n"
                "the heal resumes here once it is answered",
                agent=AGENT,
            )
        return HandlerResult(
            outcome.summary, resolved=outcome.outcome in ("fixed", "healthy"), agent=AGENT
        )

    async def resume_answered(self, desk: Desk) -> None:
        """Resume, once each, the waiting heals whose approval request has ended."""
        waiting = desk.incidents.waiting()
        if not waiting or self.servers.policy is None:
            return
        ended = await self._ended([wait for _, wait in waiting])
        for incident, wait in waiting:
            answer = ended.get(wait.request)
            if answer is None or not desk.incidents.take_up(incident.fingerprint):
                continue
            desk.say(f"{_answered(wait.request, answer)}; resuming the heal of {incident.subject}")
            desk.tasks.start_soon(self._resume, desk, incident, wait)

    async def _ended(self, waits: list[Wait]) -> dict[str, dict[str, Any]]:
        """claim_approval for each wait, as the loop's own waiter (the thread): the ended ones.
        A request the store refuses (gone, taken by another run) counts as ended: the loop then
        escalates with the store's reason instead of waiting forever."""
        ended: dict[str, dict[str, Any]] = {}
        servers = Servers(policy=self.servers.policy)
        async with open_toolbox(load_role(AGENT), servers) as toolbox:
            for wait in waits:
                try:
                    claimed = await toolbox.call(
                        "claim_approval", request_id=wait.request, waiter=wait.thread
                    )
                except ToolFailed as exc:
                    if not exc.unreachable:
                        ended[wait.request] = {"state": "refused", "why": exc.reason}
                    continue
                if claimed.get("claimed"):
                    ended[wait.request] = claimed
        return ended

    async def _resume(self, desk: Desk, incident: Incident, wait: Wait) -> None:
        try:
            async with self._turn(incident):
                outcome = await self._run(incident, resume=wait)
        except Exception as exc:  # one failed resume must not end the watcher
            desk.say(f"resuming the heal of {incident.subject} failed: {exc}")
            desk.incidents.set_state(incident.fingerprint, "open")
            metrics.incident_handled(AGENT, "failed")
            return
        result = self._settled(incident, outcome)
        desk.say(f"handled {incident.subject}:\n{result.answer}")
        current = desk.incidents.get(incident.fingerprint)
        waiting = current is not None and current.state == "waiting"
        metrics.incident_handled(AGENT, "waiting" if waiting else _ended(result))
        if current is None or current.state != "handling":
            return  # waiting again, or resolved meanwhile: keep that
        if result.resolved:
            desk.resolve(incident.fingerprint, why=f"healed after approval {wait.request}")
        else:
            desk.incidents.set_state(incident.fingerprint, "open")


def _ended(result: HandlerResult) -> str:
    return "healed" if result.resolved else "open"


def _answered(request: str, answer: dict[str, Any]) -> str:
    """'approval a-1 granted by person alice via cli', from claim_approval's answer."""
    state = str(answer.get("state", "ended"))
    if state == "refused":
        return f"approval {request} cannot be taken up: {answer.get('why', '')}"
    people = [
        f"{a.get('by', '?')} via {a.get('via', '?')}"
        for a in answer.get("answers") or []
        if isinstance(a, dict)
    ]
    return f"approval {request} {state}" + (f" by {', '.join(people)}" if people else "")


def book(outcome: LoopResult, incidents: Path) -> str:
    """Record what a heal a person ran left for people (see the module docstring); the line to
    tell them, "" when nothing was booked."""
    target, finding = outcome.state.get("target"), outcome.state.get("finding") or {}
    if not target:
        return ""
    said = str(finding.get("summary") or outcome.summary.split("\n", 1)[0])
    signal = Signal(
        source="heal", kind=target["kind"], namespace=target["namespace"], name=target["name"],
        finding=str(finding.get("code") or "Heal"), summary=said,
    )  # fmt: skip
    with closing(open_incidents(incidents)) as store:
        if outcome.outcome in ("fixed", "healthy"):
            if store.resolve(signal.fingerprint):
                return f"incident {signal.fingerprint} resolved"
            return ""
        incident, _ = store.record(signal)
        if not outcome.finished and outcome.waiting_for:
            store.wait(
                signal.fingerprint,
                request=outcome.waiting_for,
                thread=outcome.thread,
                asked=outcome.asked,
            )
            return (
                f"booked as incident {incident.subject}, waiting for approval "
                f"{outcome.waiting_for}: `kubecrew status` shows it, and a running "
                "`kubecrew watch --heal` resumes the heal once it is answered"
            )
        if incident.state != "handling":
            store.set_state(signal.fingerprint, "open")
        return f"booked as open incident {incident.subject}: `kubecrew status` shows it"


def heal_with_dev_team(servers: Servers, *, home: Path | None = None) -> Handler:
    """The loop as a plain handler, without the healer's turns and waits (tests, embedding)."""

    async def handle(incident: Incident) -> HandlerResult:
        return await heal_incident(incident, servers=servers, home=home)

    return handle
