"""A change asked in a conversation: made precise, asked back first when destructive, carried
out the one way (`carry`) once the person says yes.

Every agent's graph runs one turn of this: `turn(...)` takes the person's words, the change
waiting for a yes (if any), and how the agent makes the words precise (`make`: a typed change,
or the question to ask back), and returns what the turn says and leaves waiting. Nothing is
written before the change is precise, within the agent's tools, and confirmed when it is
destructive ("this deletes ...: reply 'yes'"); a "yes" with nothing waiting is a new request.

Must not know: any agent; the agent hands in its own way of making a change precise.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from agents.runtime.changes import carry, ops
from agents.runtime.changes.words import affirmative
from agents.runtime.loop.validation import LoopSettings
from agents.runtime.toolbox import Toolbox

Made = Callable[[], Awaitable["ops.Change | str"]]  # the change, or the question to ask back


@dataclass(frozen=True)
class Turn:
    answer: str
    report: dict[str, Any] = field(default_factory=dict)
    pending: dict[str, Any] | None = None  # a destructive change waiting for "yes"
    clarifying: bool = False
    change: ops.Change | None = None


def confirmed(question: str, pending: dict[str, Any] | None) -> ops.Change | None:
    """The waiting change, when `question` says yes to it."""
    return ops.from_json(pending) if pending and affirmative(question) else None


def confirm_text(change: ops.Change) -> str:
    return (
        f"This would {change.describe()}{_note(change)}. It is destructive, so I ask first: "
        "reply 'yes' to go on, anything else to leave it as it is."
    )


def _note(change: ops.Change) -> str:
    if isinstance(change, ops.Scale) and change.replicas == 0:
        if change.target.kind in ops.POOLS:
            return " (every node of the pool is drained and removed)"
        return " (every pod of it stops)"
    if isinstance(change, ops.Delete):
        gone = " and everything in it" if change.target.kind == "Namespace" else ""
        return f" (it{gone} is gone for good unless a controller makes it again)"
    if isinstance(change, ops.Drain):
        return " (its pods are evicted and start elsewhere)"
    if isinstance(change, ops.Grant):
        return " (wide access: admin rights, every verb, or Secrets)"
    return ""


def held(change: ops.Change, toolbox: Toolbox) -> Turn | None:
    """The turn that stops before anything is written: a change this agent cannot make, or a
    destructive one asked back. None when it may go ahead."""
    beyond = carry.beyond(toolbox, change)
    if beyond:
        text = f"I may not {change.describe()}: {beyond}. Nothing changed."
        return Turn(text, {"clarification": text}, clarifying=True, change=change)
    if change.destructive:
        data = change.model_dump(mode="json")
        text = confirm_text(change)
        return Turn(text, {"clarification": text, "confirm": data}, data, True, change)
    return None


async def turn(
    toolbox: Toolbox,
    question: str,
    pending: dict[str, Any] | None,
    make: Made,
    *,
    agent: str,
    settings: LoopSettings,
) -> Turn:
    """One turn of a change asked in words (see the module)."""
    change = confirmed(question, pending)
    if change is None:
        made = await make()
        if isinstance(made, str):
            return Turn(made, {"clarification": made}, clarifying=True)
        stop = held(made, toolbox)
        if stop is not None:
            return stop
        change = made
    return await carried(toolbox, change, agent=agent, settings=settings, question=question)


async def carried(
    toolbox: Toolbox, change: ops.Change, *, agent: str, settings: LoopSettings, question: str
) -> Turn:
    done = await carry.carry_out(
        toolbox, change, agent=agent, settings=settings, why=f"asked in conversation: {question!r}"
    )
    report = done.report(change)
    if done.outcome == "waiting":
        report["outcome"] = "escalated"  # a person decides: `kubecrew ask` exits 3
    return Turn(done.summary, report, change=change)
