"""Which PR bodies carry an approval request: exactly one well-formed marker, in a crew PR."""

from __future__ import annotations

import pytest

from core.errors import InvalidArgument
from mcp_servers.gitops.approval_links import mark, marked
from mcp_servers.gitops.providers.base import PullRequest


def pr(body: str, author: str = "kubecrew") -> PullRequest:
    return PullRequest(
        number=1, title="t", body=body, head="h", base="main", head_commit="0" * 40,
        author=author, created_at="2026-12-02T11:00:00+00:00",
    )  # fmt: skip


def test_mark_writes_one_marker_that_marked_reads_back() -> None:
    body = mark("Scale web down.", "a-1a2b3c4d")
    assert body.splitlines()[-1] == "kubecrew-approval: a-1a2b3c4d"
    assert "This change waits for approval request a-1a2b3c4d" in body
    assert mark(body, "a-1a2b3c4d") == body
    assert marked(pr(body), crew_author="kubecrew") == "a-1a2b3c4d"
    with pytest.raises(InvalidArgument, match="the body holds a 'kubecrew-approval:' line"):
        mark(body, "a-99999999")


@pytest.mark.parametrize(
    ("body", "author"),
    [
        ("kubecrew-approval: a-1a2b3c4d", "mallory"),
        ("kubecrew-approval: a-1a2b3c4d\nkubecrew-approval: a-99999999", "kubecrew"),
        ("kubecrew-approval: a-1a2b3c4d\nkubecrew-approval: a-1a2b3c4d", "kubecrew"),
        ("kubecrew-approval: a-1A2B3C4D", "kubecrew"),
        ("kubecrew-approval: a-1a2b3c4d and more", "kubecrew"),
        ("see kubecrew-approval: a-1a2b3c4d", "kubecrew"),
        ("kubecrew-approval:", "kubecrew"),
        ("", "kubecrew"),
    ],
    ids=[
        "stranger",
        "two-requests",
        "repeated",
        "upper-case",
        "trailing-text",
        "mid-line",
        "no-id",
        "no-marker",
    ],
)
def test_a_pr_that_claims_too_much_or_too_little_claims_nothing(body: str, author: str) -> None:
    assert marked(pr(body, author), crew_author="kubecrew") is None
