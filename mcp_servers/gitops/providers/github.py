"""The GitHub PR provider: pull requests on github.com (or GitHub Enterprise) over its REST API.

The local `Repository` is a clone whose remote (`origin` by default) is the GitHub repository.
Branches are made locally, as for the local provider, and pushed with git before a PR is opened;
merges happen on GitHub, then the base branch is fetched so the next read, diff or sync sees the
merge commit. GitHub's REST API has no revert, so a revert is made locally (`Repository.revert`),
pushed, and opened as a PR whose body ends in "Reverts #N", which is also how `reverts` is read.

Comments and reviews are posted as the token's account, GitHub knows no other author, so the
`author` arguments of the interface are not used here, not even in a review's text: a review
is the bot's, and never reads as anyone else's. Listing open PRs
reads each one's reviews so that `approved` is true to GitHub: one extra call per open PR.

The REST calls, their pagination and the mapping of HTTP failures to tool errors are in
`github_api`; the pushes and fetches of the clone are in `github_git`.
"""

from __future__ import annotations

import re
from typing import Literal

from core.errors import Conflict, InvalidArgument
from mcp_servers.gitops.providers.base import (
    Check,
    CheckState,
    Comment,
    FileChange,
    PrState,
    PullRequest,
    PullRequestDetail,
    Review,
    Verdict,
)
from mcp_servers.gitops.providers.github_api import DEFAULT_API_URL, GitHubApi, Json
from mcp_servers.gitops.providers.github_git import GitRemote
from mcp_servers.gitops.providers.local import bounded_diff, file_changes, fork_point
from mcp_servers.gitops.repo import Repository

_SLUG = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]*)/[A-Za-z0-9._-]+$")
_REVERTS = re.compile(r"^Reverts #(\d+)\.?[ \t]*$", re.MULTILINE)
_EVENTS: dict[Verdict, str] = {
    "approve": "APPROVE",
    "request_changes": "REQUEST_CHANGES",
    "comment": "COMMENT",
}
_VERDICTS: dict[str, Verdict] = {
    "APPROVED": "approve",
    "CHANGES_REQUESTED": "request_changes",
    "COMMENTED": "comment",
}
_PASSING = {"success", "neutral", "skipped"}
_OUTCOME: dict[bool, CheckState] = {True: "success", False: "failure"}


class GitHubProvider:
    def __init__(
        self,
        repo: Repository,
        *,
        slug: str,
        token: str,
        token_env: str = "GITHUB_TOKEN",
        api_url: str = DEFAULT_API_URL,
        remote: str = "origin",
        timeout: float = 30.0,
    ) -> None:
        if not _SLUG.match(slug):
            raise InvalidArgument(f"GitHub repository {slug!r} is not of the form owner/name")
        if remote not in {r.name for r in repo.git_repo.remotes}:
            raise InvalidArgument(
                f"the repository has no git remote {remote!r}; add the GitHub repository as "
                f"one (git remote add {remote} https://github.com/{slug}.git)"
            )
        self.repo, self.slug, self.remote = repo, slug, remote
        self._api = GitHubApi(
            slug=slug, token=token, token_env=token_env, api_url=api_url, timeout=timeout
        )
        self._git = GitRemote(repo, remote=remote, token=token)

    # -- the Provider interface -----------------------------------------------------------

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
    ) -> PullRequest:
        self._git.push(head)
        if reverts is not None and _reverts(body) != reverts:
            body = f"{body}\n\nReverts #{reverts}.".lstrip()
        payload = {"title": title, "body": body, "head": head, "base": base}
        raw = self._api.json("POST", "pulls", json=payload)
        number = raw["number"]
        if labels:
            raw["labels"] = self._api.json(
                "POST", f"issues/{number}/labels", json={"labels": labels}
            )
        return _pull_request(raw, files=self._files(number))

    def list_prs(self, *, state: PrState | Literal["all"] = "open") -> list[PullRequest]:
        asked = {"open": "open", "merged": "closed", "closed": "closed", "all": "all"}[state]
        params = {"state": asked, "sort": "created", "direction": "desc"}
        prs = [
            _pull_request(
                raw, reviews=self._reviews(raw["number"]) if raw["state"] == "open" else []
            )
            for raw in self._api.paged("pulls", params=params)
        ]
        return sorted((p for p in prs if state in ("all", p.state)), key=lambda p: -p.number)

    def get(self, number: int) -> PullRequestDetail:
        raw = self._pull(number)
        diff = self._api.call(
            "GET", f"pulls/{number}", accept="application/vnd.github.diff", tolerate=(406,)
        )
        if diff.status_code == 406:  # GitHub renders no diff past its own size limits
            text, note = "", "GitHub will not show a diff this large; read_manifest at the head ref"
        else:
            text, note = bounded_diff(diff.text)
        return PullRequestDetail(
            pr=self._with_activity(raw), diff=text, diff_note=note, checks=self._checks(raw)
        )

    def comment(self, number: int, *, author: str, body: str) -> PullRequest:
        self._api.json("POST", f"issues/{number}/comments", json={"body": body})
        return self._with_activity(self._pull(number))

    def review(self, number: int, *, author: str, verdict: Verdict, body: str) -> PullRequest:
        # GitHub requires a body for REQUEST_CHANGES and COMMENT: the verdict, in words.
        text = body or verdict.replace("_", " ")
        self._api.json(
            "POST", f"pulls/{number}/reviews", json={"event": _EVENTS[verdict], "body": text}
        )
        return self._with_activity(self._pull(number))

    def merge(self, number: int, *, require_approval: bool = True) -> PullRequest:
        raw = self._pull(number)
        pr = self._with_activity(raw)
        if pr.state != "open":
            raise Conflict(f"pull request #{number} is {pr.state}; only open ones can change")
        if require_approval and not pr.approved:
            raise Conflict(
                f"pull request #{number} is not approved (or a reviewer asked for changes); "
                "review it with verdict 'approve' first"
            )
        failed = [c for c in self._checks(raw) if c.state == "failure"]
        if failed:
            raise Conflict(f"checks failed: {'; '.join(c.name + ': ' + c.summary for c in failed)}")
        # `sha` makes GitHub refuse (409) if the head moved after it was reviewed.
        payload = {"merge_method": "merge", "sha": pr.head_commit}
        done = self._api.json("PUT", f"pulls/{number}/merge", json=payload)
        merged = pr.model_copy(update={"state": "merged", "merge_commit": str(done["sha"])})
        self._git.catch_up(pr.base, merged=merged.merge_commit or "")
        return merged

    def close(self, number: int) -> PullRequest:
        return _pull_request(self._api.json("PATCH", f"pulls/{number}", json={"state": "closed"}))

    def file_changes(self, number: int) -> list[FileChange]:
        """Read from the clone, after fetching what GitHub has: the head branch (someone
        else may have opened or pushed it) and the base, which holds a merge."""
        pr = _pull_request(self._pull(number))
        base = self._git.fetch(pr.base)
        if pr.state == "merged" and pr.merge_commit:
            merge = self.repo.git_repo.commit(pr.merge_commit)
            return file_changes(self.repo, merge.parents[0].hexsha, merge.hexsha)
        self._git.fetch(pr.head)
        return file_changes(self.repo, fork_point(self.repo, base, pr.head_commit), pr.head_commit)

    def set_body(self, number: int, *, body: str) -> PullRequest:
        pr = _pull_request(self._pull(number))
        if pr.state != "open":
            raise Conflict(f"pull request #{number} is {pr.state}; only open ones can change")
        self._api.json("PATCH", f"pulls/{number}", json={"body": body})
        return self._with_activity(self._pull(number))

    def advance(self, number: int) -> PullRequest:
        pr = _pull_request(self._pull(number))
        if pr.state != "open":
            raise Conflict(f"pull request #{number} is {pr.state}; only open ones can change")
        self._git.push(pr.head)  # GitHub moves the PR's head with its branch
        return self._with_activity(self._pull(number))

    def revert(self, number: int, *, author: str) -> PullRequest:
        pr = _pull_request(self._pull(number))
        if pr.state != "merged" or not pr.merge_commit:
            raise Conflict(
                f"pull request #{number} is {pr.state}; only merged ones can be reverted"
            )
        tracking = self._git.fetch(pr.base)
        branch = f"revert-{number}-{pr.merge_commit[:8]}"
        title = f'Revert "{pr.title}"'
        self.repo.revert(
            commit=pr.merge_commit,
            start=tracking,
            branch=branch,
            message=f"{title}\n\nThis reverts pull request #{number} ({pr.merge_commit}).",
        )
        return self.open(
            title=title,
            body=f"Reverts #{number}.",
            labels=["revert"],
            head=branch,
            base=pr.base,
            author=author,
            reverts=number,
        )

    # -- reading GitHub -------------------------------------------------------------------

    def _pull(self, number: int) -> Json:
        raw: Json = self._api.json("GET", f"pulls/{number}")
        return raw

    def _files(self, number: int) -> list[str]:
        return [f["filename"] for f in self._api.paged(f"pulls/{number}/files")]

    def _reviews(self, number: int) -> list[Review]:
        return [
            Review(
                author=_login(r),
                verdict=_VERDICTS[r["state"]],
                body=r.get("body") or "",
                at=r.get("submitted_at") or "",
                id=str(r.get("id", "")),
            )
            for r in self._api.paged(f"pulls/{number}/reviews")
            if r.get("state") in _VERDICTS  # dismissed and pending reviews decide nothing
        ]

    def _with_activity(self, raw: Json) -> PullRequest:
        number = raw["number"]
        comments = [
            Comment(
                author=_login(c),
                body=c.get("body") or "",
                at=c.get("created_at") or "",
                id=str(c.get("id") or ""),
            )
            for c in self._api.paged(f"issues/{number}/comments")
        ]
        return _pull_request(
            raw, reviews=self._reviews(number), comments=comments, files=self._files(number)
        )

    def _checks(self, raw: Json) -> list[Check]:
        runs = self._api.paged(f"commits/{raw['head']['sha']}/check-runs", key="check_runs")
        checks = [Check(name=r["name"], state=_check_state(r), summary=_summary(r)) for r in runs]
        if raw["state"] == "open" and "mergeable" in raw:
            mergeable = raw["mergeable"]  # null while GitHub is still computing it
            state: CheckState = "pending" if mergeable is None else _OUTCOME[bool(mergeable)]
            summary = {True: "merges cleanly", False: "conflicts with the base branch"}
            checks.append(Check(name="mergeable", state=state, summary=summary.get(mergeable, "")))
        return checks


def _pull_request(
    raw: Json,
    *,
    reviews: list[Review] | None = None,
    comments: list[Comment] | None = None,
    files: list[str] | None = None,
) -> PullRequest:
    merged = bool(raw.get("merged_at"))
    state: PrState = "open" if raw["state"] == "open" else "merged" if merged else "closed"
    body = raw.get("body") or ""
    return PullRequest(
        number=raw["number"],
        title=raw["title"],
        body=body,
        labels=[label["name"] for label in raw.get("labels") or []],
        head=raw["head"]["ref"],
        base=raw["base"]["ref"],
        head_commit=raw["head"]["sha"],
        state=state,
        author=_login(raw),
        created_at=raw.get("created_at") or "",
        comments=comments or [],
        reviews=reviews or [],
        merge_commit=raw.get("merge_commit_sha") if merged else None,
        reverts=_reverts(body),
        files=files or [],
    )


def _reverts(body: str) -> int | None:
    found = _REVERTS.findall(body)
    return int(found[-1]) if found else None


def _login(raw: Json) -> str:
    return str((raw.get("user") or {}).get("login") or "")


def _check_state(run: Json) -> CheckState:
    if run.get("status") != "completed":
        return "pending"
    return "success" if run.get("conclusion") in _PASSING else "failure"


def _summary(run: Json) -> str:
    output = run.get("output") or {}
    text = output.get("title") or output.get("summary") or run.get("conclusion") or ""
    return str(text)[:1000]
