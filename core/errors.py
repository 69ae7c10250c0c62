"""The errors a tool reports, each saying what to do next.

    ToolError                 base: the message is shown to the caller (model or person) as is
    +-- InvalidArgument       the caller asked for something malformed: fix the argument
    +-- NotFound              the thing named does not exist (there, or at all)
    +-- PermissionDenied      the identity may not do this: names the verb and resource
    +-- Conflict              the object changed meanwhile, or a guard refused: re-read and retry
    +-- TooManyRequests       the API said not now (429: a disruption budget, throttling): wait
    +-- Unavailable           the cluster, Prometheus or forge did not answer: retry later
    +-- Expired               a watch's resourceVersion is older than the API server keeps (410)

Third-party errors (the Kubernetes client's ApiException, httpx's, GitPython's) are wrapped and
chained at the engine's edge, never shown raw, and never with a traceback.
"""

from __future__ import annotations


class ToolError(Exception):
    retryable = False

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidArgument(ToolError):
    """The caller asked for something malformed: fix the argument."""


class NotFound(ToolError):
    """The thing named does not exist (there, or at all)."""


class PermissionDenied(ToolError):
    """The identity may not do this; the message names the verb and resource."""


class Conflict(ToolError):
    retryable = True


class TooManyRequests(ToolError):
    retryable = True


class Unavailable(ToolError):
    retryable = True


class Expired(ToolError):
    """A watch or a list continuation from a resourceVersion the API server no longer keeps
    (410 Gone): list again, then watch from the list's resourceVersion."""

    retryable = True
