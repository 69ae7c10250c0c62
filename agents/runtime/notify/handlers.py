"""What the watcher does with a new incident: ask the Dev Team agent why, or let it heal.

`diagnose_with_dev_team` asks the Dev Team agent "why is NAME failing?" in a conversation of its
own (the agent's role, tools, memory and checkpoints, exactly as `kubecrew ask` does), so an
incident's diagnosis is the answer a person would get, and is remembered with the agent's other
incidents. It reads only.

`heal_with_dev_team` (and `heal_incident`, which the Slack messages use to follow each step) hands
the incident to the remediation loop, `agents.dev_team.heal.heal`, which mutates only through its
gates: the servers must include the policy server (and gitops for git-managed workloads).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from agents.runtime.brain import Planner
from agents.runtime.notify.desk import Handler, HandlerResult
from agents.runtime.notify.incidents import Incident
from agents.runtime.toolbox import Servers

if TYPE_CHECKING:
    from agents.runtime.loop.validation import LoopSettings

WORKLOADS = {"Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "Pod", "Service"}


def diagnose_with_dev_team(servers: Servers, planner: Planner, *, home: Path | None) -> Handler:
    async def handle(incident: Incident) -> HandlerResult:
        from agents.dev_team.conversation import conversation

        if incident.kind not in WORKLOADS:
            return HandlerResult(f"{incident.subject}: {incident.summary} (not a workload)")
        question = f"why is {incident.name} failing?"
        async with conversation(servers, planner, home=home) as talk:
            outcome = await talk.ask(question, namespace=incident.namespace or None)
        return HandlerResult(outcome.answer)

    return handle


async def heal_incident(
    incident: Incident,
    *,
    servers: Servers,
    home: Path | None = None,
    settings: LoopSettings | None = None,
    on_node: Callable[[str], None] | None = None,
) -> HandlerResult:
    """The remediation loop on the incident's workload; resolved when the fix was validated
    (or the workload turned out healthy)."""
    from agents.dev_team.heal import heal
    from agents.dev_team.state import TargetRef

    if incident.kind not in WORKLOADS:
        return HandlerResult(f"{incident.subject}: {incident.summary} (not a workload)")
    target = TargetRef(kind=incident.kind, name=incident.name, namespace=incident.namespace)
    outcome = await heal(
        target,
        incident=incident.fingerprint,
        servers=servers,
        home=home,
        settings=settings,
        on_node=on_node,
    )
    return HandlerResult(outcome.summary, resolved=outcome.outcome in ("fixed", "healthy"))


def heal_with_dev_team(servers: Servers, *, home: Path | None = None) -> Handler:
    async def handle(incident: Incident) -> HandlerResult:
        return await heal_incident(incident, servers=servers, home=home)

    return handle
