"""The errors an agent run raises, each saying what to do next.

    AgentError                the base: the message is shown to the person as is
    +-- ToolFailed            an MCP tool answered with an error (its message, unchanged): the
    |                         planner may try another call; a person reads what the server said
    +-- ToolNotAllowed        the role's allow-list has no such tool: a planner mistake, refused
    |                         before anything reaches a server
    +-- ModelUnavailable      KUBECREW_MODEL names a model that cannot be built here (missing
                              extra, bad spec, or the test guard): fix the configuration; or
                              the model's provider failed a call (its status and message)

A cluster that does not answer is a ToolFailed whose message comes from the kube server's
`Unavailable`; the front door tells it apart by `unreachable`.
"""

from __future__ import annotations

_UNREACHABLE_HINTS = ("did not answer", "not answering", "unreachable", "connection refused")


class AgentError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ToolFailed(AgentError):
    def __init__(self, tool: str, message: str) -> None:
        super().__init__(f"{tool}: {message}")
        self.tool = tool
        self.reason = message

    @property
    def unreachable(self) -> bool:
        """The server could not reach its backend (the cluster), rather than refusing a call."""
        return any(hint in self.reason.lower() for hint in _UNREACHABLE_HINTS)

    @property
    def denied(self) -> bool:
        """The identity the server acts as may not make this call (RBAC)."""
        return "permission denied:" in self.reason.lower()


class ToolNotAllowed(AgentError):
    def __init__(self, tool: str, role: str) -> None:
        super().__init__(
            f"tool {tool!r} is not in the {role} agent's allow-list (agents/{role}/AGENTS.md); "
            "nothing was called"
        )
        self.tool = tool


class ModelUnavailable(AgentError):
    """KUBECREW_MODEL cannot be honoured (the message names the extra to install), or the model
    failed to answer (the message carries the provider's error)."""


def first_agent_error(group: BaseExceptionGroup[BaseException]) -> AgentError | None:
    """The AgentError inside a task group's exception group (MCP sessions run in task groups,
    which wrap what the agent raised), so a front door can report it as itself."""
    for exc in group.exceptions:
        if isinstance(exc, AgentError):
            return exc
        if isinstance(exc, BaseExceptionGroup):
            found = first_agent_error(exc)
            if found is not None:
                return found
    return None
