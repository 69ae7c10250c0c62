"""Finding an agent by name: the registry is filled by the agents themselves.

Each agent declares itself as an entry point of the `kubecrew.agents` group in its
distribution's metadata (pyproject's `[project.entry-points."kubecrew.agents"]`), naming the
`Agent` its conversation module defines. So the registry imports no agent: an agent is loaded
the first time it is asked for, which keeps `kubecrew --help` quick, and a package installed
beside kubecrew can add an agent without changing it.
"""

from __future__ import annotations

from functools import cache
from importlib.metadata import entry_points

from agents.runtime.contract import Agent
from agents.runtime.errors import AgentError

GROUP = "kubecrew.agents"


def names() -> tuple[str, ...]:
    """Every agent installed, by name."""
    return tuple(sorted(ep.name for ep in entry_points(group=GROUP)))


@cache
def find(name: str) -> Agent | None:
    """The agent called `name`, or None when none is installed under that name."""
    for ep in entry_points(group=GROUP, name=name):
        found = ep.load()
        if not isinstance(found, Agent):
            raise AgentError(f"entry point {ep.value} ({GROUP}) is not an Agent; fix its package")
        return found
    return None
