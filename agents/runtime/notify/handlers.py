"""What the watcher does with a new incident: ask the Dev Team agent why, or let it heal.

`diagnose_with_dev_team` asks the Dev Team agent "why is NAME failing?" in a conversation of its
own (the agent's role, tools, memory and checkpoints, exactly as `kubecrew ask` does), so an
incident's diagnosis is the answer a person would get, and is remembered with the agent's other
incidents. It reads only.

`heal_with_dev_team` hands the incident to the remediation loop's entry point,
`agents.dev_team.heal.heal(target, incident=...)`, which mutates only through its gates. That
module arrives with the loop; until then `healing_available()` is False and the front door says
so instead of watching without the healing it was asked for.
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path
from typing import Any

from agents.runtime.brain import Planner
from agents.runtime.notify.desk import Handler, HandlerResult
from agents.runtime.notify.incidents import Incident
from agents.runtime.toolbox import Servers

HEAL_MODULE = "agents.dev_team.heal"
WORKLOADS = {"Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "Pod", "Service"}


def healing_available() -> bool:
    return importlib.util.find_spec(HEAL_MODULE) is not None


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


def heal_with_dev_team() -> Handler:
    module: Any = importlib.import_module(HEAL_MODULE)

    async def handle(incident: Incident) -> HandlerResult:
        target = {"kind": incident.kind, "name": incident.name, "namespace": incident.namespace}
        outcome = await module.heal(target, incident=incident.fingerprint)
        # The loop's outcome is its own type; what the watcher needs is its words and whether
        # the fix was validated.
        answer = str(getattr(outcome, "answer", outcome))
        return HandlerResult(answer, resolved=bool(getattr(outcome, "validated", False)))

    return handle
