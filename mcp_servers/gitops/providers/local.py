"""The embedded PR provider: pull requests as JSON records beside the repository, merged by git.

Records live in `<state_dir>/prs/<number>.json`, outside the work tree (refused otherwise), so
they never appear as changes of the repository. A merge is a real `--no-ff` merge commit on the
base branch; a revert is a new branch and PR undoing the merge. Checks are computed on each
`get` from the repository itself (the changed manifests parse and name their objects; the branch
merges cleanly), so they work offline and never go stale.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import yaml

from core.errors import Conflict, InvalidArgument, NotFound
from mcp_servers.gitops.providers.base import (
    Check,
    Comment,
    FileChange,
    PrState,
    PullRequest,
    PullRequestDetail,
    Review,
    Verdict,
)
from mcp_servers.gitops.repo import Repository

DIFF_BUDGET = 12_000


def bounded_diff(diff: str) -> tuple[str, str]:
    """The diff within DIFF_BUDGET characters, and a note when it was cut. Unlike a log, the
    head is kept: the first files and hunks are where a reviewer starts reading."""
    if len(diff) <= DIFF_BUDGET:
        return diff, ""
    return diff[:DIFF_BUDGET], "diff cut to fit; read_manifest at the head ref"


def file_changes(repo: Repository, before: str, after: str) -> list[FileChange]:
    """Each file that differs between commits `before` and `after` (shas), whole, both sides."""
    listing = str(repo.git_repo.git.diff("--name-only", "--no-renames", before, after))

    def text(ref: str, path: str) -> str | None:
        try:
            return repo.read(ref, path)
        except NotFound:
            return None

    return [
        FileChange(path=path, before=text(before, path), after=text(after, path))
        for path in listing.splitlines()
        if path
    ]


def fork_point(repo: Repository, base: str, head: str) -> str:
    """Where `head` forked from `base` (their merge base), as a sha; a PR's diff starts there."""
    found = repo.git_repo.merge_base(repo.resolve(base), repo.resolve(head))
    if not found:
        raise Conflict(f"{head} shares no history with {base}; it cannot be compared")
    return str(found[0].hexsha)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class LocalProvider:
    def __init__(self, repo: Repository, state_dir: Path) -> None:
        work_tree = repo.git_repo.working_tree_dir
        if work_tree and state_dir.resolve().is_relative_to(Path(work_tree).resolve()):
            raise InvalidArgument(
                f"the PR state directory {state_dir} is inside the repository's work tree; "
                "choose a directory beside it"
            )
        self.repo = repo
        self.dir = state_dir / "prs"
        self.dir.mkdir(parents=True, exist_ok=True)

    # -- records --------------------------------------------------------------------------

    def _path(self, number: int) -> Path:
        return self.dir / f"{number}.json"

    def _load(self, number: int) -> PullRequest:
        try:
            return PullRequest.model_validate_json(self._path(number).read_text())
        except FileNotFoundError as exc:
            raise NotFound(f"no pull request #{number}; list_prs shows the open ones") from exc

    def _save(self, pr: PullRequest) -> PullRequest:
        tmp = self._path(pr.number).with_suffix(".tmp")
        tmp.write_text(json.dumps(pr.model_dump(), indent=2))
        os.replace(tmp, self._path(pr.number))
        return pr

    def _open_one(self, number: int) -> PullRequest:
        pr = self._load(number)
        if pr.state != "open":
            raise Conflict(f"pull request #{number} is {pr.state}; only open ones can change")
        return pr

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
        numbers = [int(p.stem) for p in self.dir.glob("*.json") if p.stem.isdigit()]
        _diff, files = self.repo.diff(base, head)
        pr = PullRequest(
            number=max(numbers, default=0) + 1,
            title=title,
            body=body,
            labels=labels,
            head=head,
            base=base,
            head_commit=self.repo.resolve(head),
            author=author,
            created_at=_now(),
            reverts=reverts,
            files=files,
        )
        return self._save(pr)

    def list_prs(self, *, state: PrState | Literal["all"] = "open") -> list[PullRequest]:
        prs = [PullRequest.model_validate_json(p.read_text()) for p in self.dir.glob("*.json")]
        return sorted(
            (p for p in prs if state == "all" or p.state == state), key=lambda p: -p.number
        )

    def get(self, number: int) -> PullRequestDetail:
        pr = self._load(number)
        if pr.state == "merged" and pr.merge_commit:
            parent = self.repo.git_repo.commit(pr.merge_commit).parents[0].hexsha
            diff, _files = self.repo.diff(parent, pr.merge_commit, since_fork=False)
        else:
            diff, _files = self.repo.diff(pr.base, pr.head)
        text, note = bounded_diff(diff)
        return PullRequestDetail(pr=pr, diff=text, diff_note=note, checks=self._checks(pr))

    def comment(self, number: int, *, author: str, body: str) -> PullRequest:
        pr = self._load(number)
        made = Comment(author=author, body=body, at=_now(), id=str(len(pr.comments) + 1))
        pr.comments.append(made)
        return self._save(pr)

    def review(self, number: int, *, author: str, verdict: Verdict, body: str) -> PullRequest:
        pr = self._open_one(number)
        made = Review(
            author=author, verdict=verdict, body=body, at=_now(), id=str(len(pr.reviews) + 1)
        )
        pr.reviews.append(made)
        return self._save(pr)

    def merge(self, number: int, *, require_approval: bool = True) -> PullRequest:
        pr = self._open_one(number)
        if require_approval and not pr.approved:
            raise Conflict(
                f"pull request #{number} is not approved (or a reviewer asked for changes); "
                "review it with verdict 'approve' first"
            )
        if self.repo.resolve(pr.head) != pr.head_commit:
            raise Conflict(f"branch {pr.head} moved since #{number} was opened; review it again")
        failed = [c for c in self._checks(pr) if c.state == "failure"]
        if failed:
            raise Conflict(f"checks failed: {'; '.join(c.name + ': ' + c.summary for c in failed)}")
        message = f"Merge pull request #{number} from {pr.head}\n\n{pr.title}"
        pr.merge_commit = self.repo.merge(base=pr.base, head=pr.head, message=message)
        pr.state = "merged"
        return self._save(pr)

    def close(self, number: int) -> PullRequest:
        pr = self._open_one(number)
        pr.state = "closed"
        return self._save(pr)

    def file_changes(self, number: int) -> list[FileChange]:
        pr = self._load(number)
        if pr.state == "merged" and pr.merge_commit:
            merge = self.repo.git_repo.commit(pr.merge_commit)
            return file_changes(self.repo, merge.parents[0].hexsha, merge.hexsha)
        return file_changes(
            self.repo, fork_point(self.repo, pr.base, pr.head_commit), pr.head_commit
        )

    def set_body(self, number: int, *, body: str) -> PullRequest:
        pr = self._open_one(number)
        pr.body = body
        return self._save(pr)

    def advance(self, number: int) -> PullRequest:
        pr = self._open_one(number)
        pr.head_commit = self.repo.resolve(pr.head)
        _diff, pr.files = self.repo.diff(pr.base, pr.head)
        return self._save(pr)

    def revert(self, number: int, *, author: str) -> PullRequest:
        pr = self._load(number)
        if pr.state != "merged" or not pr.merge_commit:
            raise Conflict(
                f"pull request #{number} is {pr.state}; only merged ones can be reverted"
            )
        branch = f"revert-{number}-{pr.merge_commit[:8]}"
        title = f'Revert "{pr.title}"'
        self.repo.revert(
            commit=pr.merge_commit,
            start=pr.base,
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

    def _checks(self, pr: PullRequest) -> list[Check]:
        ref = pr.merge_commit or pr.head
        problems = []
        for path in pr.files:
            if not path.endswith((".yaml", ".yml")):
                continue
            try:
                docs = list(yaml.safe_load_all(self.repo.read(ref, path)))
            except NotFound:
                continue  # deleted by the change
            except yaml.YAMLError as exc:
                problems.append(f"{path}: not valid YAML ({str(exc).splitlines()[0]})")
                continue
            for i, d in enumerate(x for x in docs if x is not None):
                if not isinstance(d, dict) or not (d.get("metadata") or {}).get("name"):
                    if path.rsplit("/", 1)[-1].startswith("kustomization"):
                        continue
                    problems.append(f"{path} document {i}: no kind/apiVersion/metadata.name")
        checks = [
            Check(
                name="manifests",
                state="failure" if problems else "success",
                summary="; ".join(problems)[:1000] or "changed manifests parse",
            )
        ]
        if pr.state == "open":
            problem = self.repo.merge_problem(pr.base, pr.head)
            checks.append(
                Check(
                    name="mergeable",
                    state="failure" if problem else "success",
                    summary=problem or f"merges cleanly into {pr.base}",
                )
            )
        return checks
