"""What a pull request is, and what any PR provider (local, GitHub) must be able to do with one.

The server and the agents speak only this interface; a provider maps it onto its forge. Reviews,
comments and checks are part of the record so that a model reading `get` sees everything that
decides whether a change may merge.
"""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import BaseModel, Field

PrState = Literal["open", "merged", "closed"]
Verdict = Literal["approve", "request_changes", "comment"]
CheckState = Literal["success", "failure", "pending"]


class Comment(BaseModel):
    author: str
    body: str
    at: str  # ISO 8601, UTC
    id: str = ""  # the forge's own id of the comment ("" in files written before ids were kept)


class Review(BaseModel):
    author: str
    verdict: Verdict
    body: str = ""
    at: str
    id: str = ""  # the forge's own id of the review ("" in files written before ids were kept)


class Check(BaseModel):
    name: str
    state: CheckState
    summary: str = ""


class PullRequest(BaseModel):
    number: int
    title: str
    body: str = ""
    labels: list[str] = Field(default_factory=list)
    head: str  # branch with the change
    base: str  # branch it merges into
    head_commit: str
    state: PrState = "open"
    author: str
    created_at: str
    comments: list[Comment] = Field(default_factory=list)
    reviews: list[Review] = Field(default_factory=list)
    merge_commit: str | None = None
    reverts: int | None = None  # the PR this one undoes
    files: list[str] = Field(default_factory=list)

    @property
    def approved(self) -> bool:
        """Approved by the latest verdict of every reviewer, none asking for changes."""
        latest: dict[str, Verdict] = {}
        for r in self.reviews:
            if r.verdict != "comment":
                latest[r.author] = r.verdict
        return bool(latest) and all(v == "approve" for v in latest.values())


class FileChange(BaseModel):
    """One file a pull request changes, as text before (where the PR forked from its base, or
    the merge's first parent) and after (its head, or the merge); None where it is absent."""

    path: str
    before: str | None
    after: str | None


class PullRequestDetail(BaseModel):
    pr: PullRequest
    diff: str
    diff_note: str = ""  # set when the diff was cut to fit
    checks: list[Check]


class Provider(Protocol):
    def open(
        self,
        *,
        title: str,
        body: str,
        labels: list[str],
        head: str,
        base: str,
        author: str,
        reverts: int | None = None,
    ) -> PullRequest: ...

    def list_prs(self, *, state: PrState | Literal["all"] = "open") -> list[PullRequest]: ...

    def get(self, number: int) -> PullRequestDetail: ...

    def comment(self, number: int, *, author: str, body: str) -> PullRequest: ...

    def review(self, number: int, *, author: str, verdict: Verdict, body: str) -> PullRequest: ...

    def merge(self, number: int, *, require_approval: bool = True) -> PullRequest: ...

    def close(self, number: int) -> PullRequest: ...

    def revert(self, number: int, *, author: str) -> PullRequest: ...

    def file_changes(self, number: int) -> list[FileChange]:
        """The text of each file the PR changes, before and after: what a reviewer approves,
        read whole (unlike `get`'s diff, which is cut to fit)."""
        ...

    def set_body(self, number: int, *, body: str) -> PullRequest:
        """Replace an open PR's description (its title, commits and reviews stay). Conflict
        when the PR is not open."""
        ...

    def advance(self, number: int) -> PullRequest:
        """Publish the commits added to an open PR's head branch since it was opened (or last
        advanced), so the PR shows them: the local record takes the new head; GitHub is pushed
        to. Conflict when the PR is not open."""
        ...
