"""Healing one workload: the Dev Team agent's entry to the remediation loop.

`heal(target)` is what the "fix web" / "heal web" intent, `kubecrew heal NAME`, and the watch
helper's handler call: a plain async function taking the target (a name as people type it,
"web", "shop/web", or a resolved `TargetRef`) and an optional incident id, and returning the
loop's `LoopResult`. The name is resolved through the intent grammar exactly as questions are;
a name with its kind, as kubectl writes it ("service/web", "svc/web", "pvc/data",
"shop/service/web"), is that object and no other (a Deployment and its Service share a name).
The run's tools are the Dev Team's allow-list plus the loop's own (`healing_role`).

With `book` (the incident book, as `kubecrew heal` passes it) and no thread, the run is booked
from its start to its end (`Incidents.begin`): a heal of a target whose earlier heal was killed
halfway continues that heal's thread, so the mutation it had begun is finished once, not
proposed again over its own leftovers; a heal of a target another live process is healing is
refused. A book or durable state that cannot be reached (`$KUBECREW_DATABASE_URL` not
answering) is an AgentError saying where.

While it runs, `on_node` hears each step of the loop as it finishes, `on_progress` what a long
one waits for (the PR it merges, the pods it watches soak), `on_call` each tool call, and `say`
what the booking decided.

The whole heal is one `invoke_agent dev_team` span (core.telemetry): resolving the name, the
loop's graph and its nodes, and the policy decisions of the servers whose sessions it opened.

A run that policy sends to a person stops, checkpointed, with `waiting_for` naming the approval
request and `asked` who may answer it. Calling `heal` again with that `thread` (with or without
`resume`) picks the run up where it stopped: the loop claims the request's end from the policy
store once and carries on (granted) or escalates (denied, expired). A finished thread is
returned as it ended, changing nothing.

Learning is the Dev Team's own investigation (`investigate.investigate_workload`) with the
deterministic brain; with a model brain, the model chooses the reads (its tool calls go through
`brain.act` to the same `Toolbox.run`; a write it names is refused there), and `diagnose`
and `recommend` are asked afresh so the finding and the fixes come from the server whoever
planned: the mutation, its gates and the validation are the loop's, never the model's.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, closing, contextmanager
from pathlib import Path
from typing import Any

from agents.dev_team import intents, prompts
from agents.dev_team.investigate import investigate_workload, observe
from agents.dev_team.state import AGENT, TargetRef
from agents.runtime import modelsteps
from agents.runtime.brain import Deterministic, ModelPlanner, Planner
from agents.runtime.errors import AgentError, first_agent_error
from agents.runtime.loop.direct import healing_role
from agents.runtime.loop.graph import Learn, LoopContext
from agents.runtime.loop.run import LoopResult, heal_run
from agents.runtime.loop.state import Target
from agents.runtime.loop.validation import LoopSettings
from agents.runtime.notify.incidents import Incidents, Run, open_incidents
from agents.runtime.notify.signals import Signal
from agents.runtime.persistence import agent_home, open_durable
from agents.runtime.progress import OnProgress
from agents.runtime.roles import load_role
from agents.runtime.skills import skills_for
from agents.runtime.toolbox import OnCall, Servers, Toolbox, open_toolbox
from core import telemetry
from core.errors import ToolError


async def heal(
    target: str | TargetRef,
    incident: str | None = None,
    *,
    servers: Servers,
    planner: Planner | None = None,
    home: Path | None = None,
    settings: LoopSettings | None = None,
    thread: str | None = None,
    namespace: str | None = None,
    resume: Any = None,
    on_node: Callable[[str], None] | None = None,
    on_progress: OnProgress | None = None,
    on_call: OnCall | None = None,
    book: Path | None = None,
    say: Callable[[str], None] | None = None,
) -> LoopResult:
    """Run (or, with `thread` and no new target, resume) the loop for `target`."""
    if resume is not None and thread is None and incident is None:
        raise AgentError("resume needs the run's thread: pass thread= (kubecrew heal --thread)")
    role = healing_role(load_role(AGENT))
    shown = target if isinstance(target, str) else f"{target['namespace']}/{target['name']}"
    try:
        async with (
            _traced(shown, thread),
            open_durable(home or agent_home(AGENT)) as durable,
            open_toolbox(role, servers, on_call=on_call) as toolbox,
        ):
            resolved = None if resume is not None else await _resolve(toolbox, target, namespace)
            run_thread, booked = thread or incident or uuid.uuid4().hex, None
            if book is not None and resolved is not None and thread is None and incident is None:
                booked, continuing = _begin(book, resolved, run_thread, say)
                run_thread = booked.thread
                thread = run_thread if continuing else None
            context = LoopContext(
                toolbox=toolbox,
                learn=learner(planner or Deterministic()),
                agent=AGENT,
                thread=run_thread,
                settings=settings or LoopSettings(),
            )
            result = None
            if resolved is not None and thread is not None:
                existing = await heal_run(
                    None, context=context, durable=durable, on_node=on_node, on_progress=on_progress
                )
                if existing.state:  # a thread that already ran: carry on with it, not anew
                    result = existing
            if result is None:
                result = await heal_run(
                    resolved,
                    context=context,
                    durable=durable,
                    incident=incident,
                    resume=resume,
                    on_node=on_node,
                    on_progress=on_progress,
                )
            if booked is not None and book is not None:
                with _opened(book) as incidents:
                    incidents.end(booked.fingerprint, thread=booked.thread)
            telemetry.annotate({"kubecrew.heal.outcome": result.outcome or "waiting"})
            return result
    except ToolError as exc:
        raise AgentError(exc.message) from exc
    except BaseExceptionGroup as group:  # the MCP sessions' task groups wrap what we raised
        found = first_agent_error(group)
        if found is None:
            raise
        raise found from group


@asynccontextmanager
async def _traced(target: str, thread: str | None) -> AsyncIterator[None]:
    """The heal as one span of the Dev Team agent's: resolving the target, the loop's graph,
    and (their sessions opened inside it) the servers' policy decisions."""
    attributes = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": AGENT,
        "kubecrew.task": "heal",
        "kubecrew.heal.target": target,
        "kubecrew.heal.thread": thread or "",
    }
    with telemetry.span(f"invoke_agent {AGENT}", attributes):
        yield


def _begin(
    book: Path, target: Target, thread: str, say: Callable[[str], None] | None
) -> tuple[Run, bool]:
    """Book this heal of `target` in the incident book: the run to carry out, and whether it
    continues an interrupted one (taken over). A live one in another process is refused."""
    signal = Signal(
        source="heal", kind=target["kind"], namespace=target["namespace"], name=target["name"],
        finding="Heal", summary=f"a heal is running (thread {thread})",
    )  # fmt: skip
    with _opened(book) as incidents:
        earlier = incidents.run(signal.fingerprint)
        booked = incidents.begin(signal, thread=thread)
    if booked.pid != os.getpid():
        raise AgentError(
            f"{target['kind']} {target['name']} is being healed already, by process "
            f"{booked.pid} on {booked.host} (thread {booked.thread}); wait for it, or stop it"
        )
    what = f"{target['kind']} {target['name']}"
    if say is not None:
        verb = "healing" if earlier is None else "continuing the interrupted heal of"
        say(f"{verb} {what} on thread {booked.thread}")
    return booked, earlier is not None


@contextmanager
def _opened(book: Path) -> Iterator[Incidents]:
    """The incident book; one that cannot be reached is the agent's error, raised as itself
    (not in the tool sessions' exception group)."""
    try:
        with closing(open_incidents(book)) as incidents:
            yield incidents
    except ToolError as exc:
        raise AgentError(exc.message) from exc


async def resolve_target(
    toolbox: Toolbox, target: str | TargetRef, namespace: str | None
) -> Target:
    return await _resolve(toolbox, target, namespace)


# The kinds a heal takes by name with its kind ("svc/web"), and how list_resources lists them.
KINDS: dict[str, tuple[str, str]] = {
    **dict.fromkeys(("deployment", "deployments", "deploy"), ("Deployment", "deployments")),
    **dict.fromkeys(("statefulset", "statefulsets", "sts"), ("StatefulSet", "statefulsets")),
    **dict.fromkeys(("daemonset", "daemonsets", "ds"), ("DaemonSet", "daemonsets")),
    **dict.fromkeys(("service", "services", "svc"), ("Service", "services")),
    **dict.fromkeys(
        ("persistentvolumeclaim", "persistentvolumeclaims", "pvc"),
        ("PersistentVolumeClaim", "persistentvolumeclaims"),
    ),
    **dict.fromkeys(("pod", "pods", "po"), ("Pod", "pods")),
}


async def _resolve(toolbox: Toolbox, target: str | TargetRef, namespace: str | None) -> Target:
    if not isinstance(target, str):
        return Target(kind=target["kind"], name=target["name"], namespace=target["namespace"])
    parts = target.split("/")
    if len(parts) in (2, 3) and parts[-2].lower() in KINDS:
        where = parts[0] if len(parts) == 3 else namespace
        return await _named(toolbox, parts[-2].lower(), parts[-1], where)
    intent = intents.parse(
        f"heal {target.replace('/', ' in ', 1) if '/' in target and not namespace else target}",
        namespace=namespace,
    )
    resolved = await intents.resolve(intent, toolbox)
    if isinstance(resolved, intents.Clarify):
        raise AgentError(resolved.question)
    return Target(kind=resolved.kind, name=resolved.name, namespace=resolved.namespace)


async def _named(toolbox: Toolbox, word: str, name: str, namespace: str | None) -> Target:
    """The one object of that kind and name (in `namespace`, else in any), or what exists."""
    kind, plural = KINDS[word]
    arguments: dict[str, object] = {"kind": plural, "limit": 500}
    if namespace:
        arguments["namespace"] = namespace
    listed = await toolbox.call("list_resources", **arguments)
    items = [i for i in listed.get("items", []) if isinstance(i, dict)]
    found = [i for i in items if i.get("name") == name]
    if len(found) == 1:
        return Target(kind=kind, name=name, namespace=str(found[0].get("namespace", "")))
    where = f" in {namespace}" if namespace else ""
    if found:
        spaces = ", ".join(sorted(str(i.get("namespace")) for i in found))
        raise AgentError(f"{kind} {name} is in more than one namespace ({spaces}): give -n")
    known = ", ".join(sorted(str(i.get("name")) for i in items)[:15]) or "none"
    raise AgentError(f"I found no {kind} called {name!r}{where}. The {plural} there: {known}.")


def learner(planner: Planner) -> Learn:
    if isinstance(planner, Deterministic):

        async def investigate(toolbox: Toolbox, target: Target) -> list[dict[str, Any]]:
            seen = await investigate_workload(toolbox, TargetRef(**target))
            return [dict(o) for o in seen]

        return investigate
    return _model_learner(planner)


def _model_learner(planner: ModelPlanner) -> Learn:
    async def investigate(toolbox: Toolbox, target: Target) -> list[dict[str, Any]]:
        role = load_role(AGENT)
        skills = skills_for(AGENT)
        chosen = next((s for s in skills if s.name == "diagnose-workload"), None)
        system = modelsteps.system_prompt(role, skills, chosen, planner.max_steps)
        task = prompts.task(f"heal {target['name']}", TargetRef(**target))
        reading = await modelsteps.read(planner, toolbox, system=system, task=task)
        seen = [dict(call) for call in reading.calls]
        scope = {
            "namespace": target["namespace"],
            "kind": target["kind"].lower(),
            "name": target["name"],
        }
        for tool in ("diagnose", "recommend"):  # the loop's inputs come from the servers themselves
            seen.append(dict(await observe(toolbox, tool, **scope)))
        return seen

    return investigate
