"""The agent contract: what every agent is to a front door, whichever agent it is.

An agent is found by name in the registry (`registry.find`), opens a `Conversation` on one
LangGraph thread, and every request on it returns the one `Outcome`:

    thread      the LangGraph thread the conversation runs on (checkpointed, resumable)
    answer      what to tell the person; empty when the run stopped before answering
    data        what the answer rests on: the Dev Team's report, a procedure's result
    task        the procedure or kind of question that ran
    clarifying  the answer is a question back to the person (`data["options"]` lists choices)
    target      the object the conversation is about, once resolved
    waiting     the approval request an interrupted run waits for, and who may answer it
    finished    False when the run stopped at an interrupt; `resume()` carries it on
    nodes       the graph's nodes that ran, in order

While a request runs, `on_node` hears each node as it finishes and `on_progress` what a long
one waits for meanwhile (`progress.Progress`: "validating: 1/2 pods ready"); the conversation's
tool calls go to the `on_call` it was opened with.

**The two brains.** Every agent plans with a `Planner` (`brain`): `Deterministic` (an intent
grammar, analyzers and playbooks, offline and reproducible) or a `ModelPlanner`, whose chat model
chooses the read tools to call, within a step budget, before the agent's procedure decides.
Either way a change is one of the typed changes of the shared vocabulary and goes through the
policy gate, a dry run and the audit in the tool servers; no brain has a direct write tool.

Nothing here knows a particular agent; front doors know only this module and the registry.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agents.runtime.progress import OnProgress

if TYPE_CHECKING:
    from agents.runtime.brain import Planner
    from agents.runtime.toolbox import OnCall, Servers, Toolbox

OnNode = Callable[[str], None]


@dataclass(frozen=True)
class Waiting:
    """What an interrupted thread waits for."""

    request: str  # the approval request id (a-...)
    asked: str  # who may answer it, by when, and how


@dataclass(frozen=True)
class Outcome:
    thread: str
    answer: str
    data: dict[str, Any]
    task: str = ""
    clarifying: bool = False
    target: dict[str, str] | None = None
    waiting: Waiting | None = None
    finished: bool = True
    nodes: list[str] = field(default_factory=list)


class Conversation(Protocol):
    """One conversation with an agent on one thread."""

    @property
    def toolbox(self) -> Toolbox: ...

    @property
    def thread(self) -> str: ...

    async def ask(
        self,
        question: str,
        *,
        namespace: str | None = None,
        on_node: OnNode | None = None,
        on_progress: OnProgress | None = None,
    ) -> Outcome: ...

    async def resume(
        self, *, on_node: OnNode | None = None, on_progress: OnProgress | None = None
    ) -> Outcome: ...


class Opener(Protocol):
    """How an agent's conversation is opened, the same for every agent."""

    def __call__(
        self,
        servers: Servers,
        planner: Planner,
        *,
        home: Path | None = None,
        thread: str | None = None,
        on_call: OnCall | None = None,
    ) -> AbstractAsyncContextManager[Conversation]: ...


@dataclass(frozen=True)
class Agent:
    """An agent as the registry lists it."""

    name: str  # the package name, as front doors and crew.yaml say it: dev_team, ...
    open: Opener
