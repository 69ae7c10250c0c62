"""The Dev Team's work on one named workload beside diagnosis and healing: a registry by intent.

"has web drifted?", "right-size web" and "probe web" each name a workload and ask for one piece
of work on it. The graph resolves the name (`intents.resolve`), then hands a `Request` to the
task registered for the intent kind here and shows the `Done` it returns. A kind with no task
registered is answered as unsupported, so the grammar may know a cue before its work exists.

The registry is filled by its entries, as kopf's handlers fill kopf's: each task lives in its
own module (`drift`, `probing`, `resilience`, `rightsize`) and registers itself with
`@register(kind)`, and this module imports none of them, so a task's module may import the types
here without a cycle. The package's `__init__` imports the task modules, so every task is
registered before anything in the package (the graph included) runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from agents.dev_team.state import TargetRef
from agents.runtime.loop.validation import LoopSettings
from agents.runtime.toolbox import Toolbox


@dataclass(frozen=True)
class Request:
    toolbox: Toolbox  # the agent's tools: the only way to the cluster, git, metrics and policy
    target: TargetRef  # the workload the question named, resolved against the cluster
    question: str  # as asked: a task may read more from it ("with 4 replicas")
    agent: str  # who acts, for proposals and PR authorship
    settings: LoopSettings = field(default_factory=LoopSettings)  # validation bounds and pace
    # The person asked whether ("should web have a pdb?"), not for the work: a task that
    # writes says what it would do and changes nothing.
    wondering: bool = False


@dataclass(frozen=True)
class Done:
    summary: str  # the answer shown to the person: what was found, done, and not done, and why
    report: dict[str, Any]  # the same as data (`kubecrew ask --json`)


Task = Callable[[Request], Awaitable[Done]]

TASKS: dict[str, Task] = {}  # intent kind -> its task, filled by `register`


def register(kind: str) -> Callable[[Task], Task]:
    """`@register("drift")`: the decorated task serves the intent kind `kind`."""

    def registering(task: Task) -> Task:
        TASKS[kind] = task
        return task

    return registering
