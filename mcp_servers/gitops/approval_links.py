"""How a pull request carries an approval request: one marker line in the PR body.

    This change waits for approval request a-1a2b3c4d: a review on this pull request by one of
    its approvers answers it (approve grants it, request changes denies it).
    kubecrew-approval: a-1a2b3c4d

A review on such a PR is then an answer to that request (the PR channel, wired in
`kubecrew.channels.pr.approvals`). Because an approval moves the cluster, who may *claim* a request
is narrow: a marker counts only in a PR the crew opened itself (its author is the crew's bot
author), and only when the body holds exactly one well-formed marker line. So a stranger's PR
cannot borrow a pending request and collect approvals for a different change, and a body the
crew did not mark (free text an agent passed along) cannot smuggle a marker in: `unmarked`
refuses it. This module knows nothing of the policy store; an id is only a string here.
"""

from __future__ import annotations

import re

from core.errors import InvalidArgument
from mcp_servers.gitops.providers.base import PullRequest

PREFIX = "kubecrew-approval:"
_ID = re.compile(r"a-[0-9a-f]{8}")  # proposals.new_request_id's shape
_LINE = re.compile(rf"^[ \t]*{PREFIX}[ \t]*(\S*)[ \t]*$", re.MULTILINE)


def mark(body: str, request_id: str) -> str:
    """`body` with the sentence and marker line for `request_id` appended (once)."""
    if not _ID.fullmatch(request_id):
        raise InvalidArgument(
            f"approval {request_id!r} is not an approval request id (a- and 8 hex digits); "
            "`kubecrew approvals list` shows them"
        )
    found = _LINE.findall(body)
    if found == [request_id]:
        return body
    unmarked(body)
    sentence = (
        f"This change waits for approval request {request_id}: a review on this pull request by "
        "one of its approvers answers it (approve grants it, request changes denies it)."
    )
    return f"{body.rstrip()}\n\n{sentence}\n{PREFIX} {request_id}".lstrip()


def unmarked(body: str) -> str:
    """`body` unchanged, or InvalidArgument when it already holds a marker line: only `mark`
    may write one, so free text cannot tie a PR to someone else's request."""
    if _LINE.search(body):
        raise InvalidArgument(
            f"the body holds a '{PREFIX}' line; pass the request id as `approval` instead, "
            "and the marker is written for you"
        )
    return body


def marked(pr: PullRequest, *, crew_author: str) -> str | None:
    """The request id `pr` carries, or None: not opened by `crew_author`, no marker, more than
    one marker line, or a malformed one (a PR that claims too much claims nothing)."""
    if pr.author != crew_author:
        return None
    found = _LINE.findall(pr.body)
    if len(found) != 1 or not _ID.fullmatch(found[0]):
        return None
    return str(found[0])
