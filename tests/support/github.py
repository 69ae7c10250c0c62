"""A local server speaking the part of GitHub's REST API that the gitops GitHub provider uses.

    with running_github(bare_repo, owner="acme", name="deploy", token="t0ken") as github:
        clone's origin = bare_repo; GitopsSettings(github_api_url=github.url, ...)
        github.set_check(sha, "ci", conclusion="failure")
        github.rate_limited = True
        github.review_as(1, "alice-gh", "APPROVE")  # a person reviewing on github.com

It is the network seam of the GitHub provider, faked the way GitHub behaves (JSON shapes and
field names as GitHub spells them, only the fields the provider reads): bearer token or 401,
`per_page` / `page` pagination with `Link` headers, 403 with `X-RateLimit-Remaining: 0` while
`rate_limited`, 422 for invalid input, 405 for an unmergeable PR, 409 when the head moved. Behind
it is a real bare git repository, the "GitHub side" remote the clone pushes to: head commits and
diffs are read from it, and a merge writes a real merge commit into it with git plumbing
(`merge-tree --write-tree`, `commit-tree`, `update-ref`). Requests are served one at a time.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

API_VERSION = "2022-11-28"
DOCS = "https://docs.github.com/rest"
_MERGER = {
    "GIT_AUTHOR_NAME": "GitHub",
    "GIT_AUTHOR_EMAIL": "noreply@github.com",
    "GIT_COMMITTER_NAME": "GitHub",
    "GIT_COMMITTER_EMAIL": "noreply@github.com",
}

Json = dict[str, Any]


class Reply(Exception):
    """An HTTP answer other than 200, raised from deep inside a route."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status, self.body = status, {"message": message, "documentation_url": DOCS, **extra}


@dataclass
class Pull:
    number: int
    title: str
    body: str
    head: str
    base: str
    user: str
    created_at: str
    state: str = "open"
    labels: list[str] = field(default_factory=list)
    merged_at: str | None = None
    merge_commit_sha: str | None = None
    frozen_head: str | None = None  # the head commit once closed or merged
    comments: list[Json] = field(default_factory=list)
    reviews: list[Json] = field(default_factory=list)


class FakeGitHub:
    def __init__(
        self, bare: Path, *, owner: str, name: str, token: str, login: str, max_per_page: int
    ) -> None:
        self.bare, self.owner, self.name, self.token, self.login = bare, owner, name, token, login
        self.max_per_page = max_per_page
        self.url = ""  # set once listening
        self.rate_limited = False
        self.requests: list[str] = []  # "GET /repos/o/r/pulls?state=open&per_page=100"
        self.pulls: dict[int, Pull] = {}
        self.checks: dict[str, list[Json]] = {}
        self._lock = threading.Lock()

    def set_check(
        self,
        sha: str,
        name: str,
        *,
        status: str = "completed",
        conclusion: str | None = "success",
        summary: str = "",
    ) -> None:
        """Add or replace check run `name` on commit `sha` (as a CI app would)."""
        run = {
            "name": name,
            "status": status,
            "conclusion": conclusion if status == "completed" else None,
            "output": {"title": summary, "summary": summary},
        }
        with self._lock:
            runs = [r for r in self.checks.get(sha, []) if r["name"] != name]
            self.checks[sha] = [*runs, run]

    def review_as(self, number: int, login: str, event: str, body: str = "") -> Json:
        """Add a review by `login` to PR `number`, as a person reviewing on github.com would
        (the API only ever reviews as the token's account). `event` is APPROVE,
        REQUEST_CHANGES or COMMENT; the review gets an id and a submission time as GitHub's do."""
        states = {
            "APPROVE": "APPROVED",
            "REQUEST_CHANGES": "CHANGES_REQUESTED",
            "COMMENT": "COMMENTED",
        }
        with self._lock:
            pull = self.pulls[number]
            review = {
                "id": 80_000_000 + sum(len(p.reviews) for p in self.pulls.values()),
                "user": {"login": login},
                "state": states[event],
                "body": body,
                "submitted_at": _now(),
            }
            pull.reviews.append(review)
        return review

    # -- serving --------------------------------------------------------------------------

    def handle(
        self, method: str, target: str, headers: Any, raw: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        with self._lock:
            self.requests.append(f"{method} {target}")
            try:
                return self._route(method, target, headers, raw)
            except Reply as reply:
                extra = self._limit_headers() if reply.status == 403 and self.rate_limited else {}
                return reply.status, extra, _json_bytes(reply.body)

    def _route(
        self, method: str, target: str, headers: Any, raw: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        if headers.get("Authorization") not in (f"Bearer {self.token}", f"token {self.token}"):
            raise Reply(401, "Bad credentials")
        if headers.get("X-GitHub-Api-Version", API_VERSION) != API_VERSION:
            raise Reply(400, "Unsupported API version")
        if self.rate_limited:
            raise Reply(403, "API rate limit exceeded for user ID 1.")
        split = urlsplit(target)
        query = dict(parse_qsl(split.query))
        prefix = f"/repos/{self.owner}/{self.name}/"
        if not split.path.startswith(prefix):
            raise Reply(404, "Not Found")
        body = json.loads(raw) if raw else {}
        for pattern, verb, route in _ROUTES:
            found = re.fullmatch(pattern, split.path[len(prefix) :])
            if found and verb == method:
                answer = route(self, *found.groups(), body=body, query=query, headers=headers)
                return self._answer(answer, split.path, query)
        raise Reply(404, "Not Found")

    def _answer(
        self, answer: Any, path: str, query: dict[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        status, headers = 200, {"X-RateLimit-Remaining": "4999", "X-RateLimit-Limit": "5000"}
        if isinstance(answer, tuple):
            status, answer = answer
        if isinstance(answer, str):
            headers["Content-Type"] = "application/vnd.github.diff; charset=utf-8"
            return status, headers, answer.encode()
        if isinstance(answer, Paged):
            answer, link = self._page(answer, path, query)
            if link:  # GitHub sends no Link on a list that fits one page
                headers["Link"] = link
        return status, headers, _json_bytes(answer)

    def _page(self, paged: Paged, path: str, query: dict[str, str]) -> tuple[Any, str]:
        per_page = max(1, min(int(query.get("per_page", 30)), self.max_per_page))
        number = max(1, int(query.get("page", 1)))
        last = max(1, -(-len(paged.items) // per_page))
        chosen = paged.items[(number - 1) * per_page : number * per_page]
        links = []
        for rel, n in (("next", number + 1), ("last", last)) if number < last else ():
            link = f"{self.url}{path}?{urlencode({**query, 'per_page': per_page, 'page': n})}"
            links.append(f'<{link}>; rel="{rel}"')
        wrapped = {paged.key: chosen, "total_count": len(paged.items)} if paged.key else chosen
        return wrapped, ", ".join(links)

    def _limit_headers(self) -> dict[str, str]:
        reset = str(int(time.time()) + 60)
        return {
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Limit": "5000",
            "X-RateLimit-Reset": reset,
        }

    # -- the repository -------------------------------------------------------------------

    def git(self, *args: str, env: dict[str, str] | None = None) -> str:
        done = subprocess.run(
            ["git", "-C", str(self.bare), *args], capture_output=True, text=True, env=env
        )
        if done.returncode:
            raise subprocess.CalledProcessError(done.returncode, args, done.stdout, done.stderr)
        return done.stdout.strip()

    def branch_sha(self, branch: str) -> str | None:
        try:
            return self.git("rev-parse", "--verify", "--quiet", f"refs/heads/{branch}")
        except subprocess.CalledProcessError:
            return None

    def head_sha(self, pull: Pull) -> str:
        return pull.frozen_head or self.branch_sha(pull.head) or ""

    def diff_range(self, pull: Pull) -> str:
        left = f"{pull.merge_commit_sha}^1" if pull.merge_commit_sha else f"refs/heads/{pull.base}"
        return f"{left}...{self.head_sha(pull)}"

    def _mergeable(self, pull: Pull) -> bool:
        try:
            self.git("merge-tree", "--write-tree", f"refs/heads/{pull.base}", self.head_sha(pull))
        except subprocess.CalledProcessError:
            return False
        return True

    def pull_json(self, pull: Pull, *, single: bool = False) -> Json:
        out: Json = {
            "number": pull.number,
            "state": "open" if pull.state == "open" else "closed",
            "title": pull.title,
            "body": pull.body or None,
            "user": {"login": pull.user},
            "labels": [{"name": label} for label in pull.labels],
            "created_at": pull.created_at,
            "merged_at": pull.merged_at,
            "merge_commit_sha": pull.merge_commit_sha,
            "head": {"ref": pull.head, "sha": self.head_sha(pull)},
            "base": {"ref": pull.base, "sha": self.branch_sha(pull.base)},
        }
        if single:  # only the single-PR endpoint carries it
            out["mergeable"] = self._mergeable(pull) if pull.state == "open" else None
        return out

    def pull(self, number: str) -> Pull:
        if int(number) not in self.pulls:
            raise Reply(404, "Not Found")
        return self.pulls[int(number)]


@dataclass
class Paged:
    items: list[Any]
    key: str = ""  # set when the list is wrapped, as check-runs are: {"check_runs": [...]}


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _json_bytes(value: Any) -> bytes:
    return json.dumps(value).encode()


def _invalid(resource: str, field_name: str, code: str = "invalid") -> Reply:
    error = {"resource": resource, "field": field_name, "code": code}
    return Reply(422, "Validation Failed", errors=[error])


def _refused(message: str) -> Reply:
    error = {"resource": "PullRequest", "code": "custom", "message": message}
    return Reply(422, "Validation Failed", errors=[error])


# -- routes: (path pattern below /repos/{owner}/{repo}/, method, handler) ----------------------


def _list_pulls(gh: FakeGitHub, *, query: dict[str, str], **_: Any) -> Paged:
    state = query.get("state", "open")
    if state not in ("open", "closed", "all"):
        raise _invalid("PullRequest", "state")
    chosen = [
        p for p in gh.pulls.values() if state in ("all", "closed" if p.state != "open" else "open")
    ]
    newest_first = sorted(chosen, key=lambda p: -p.number)
    return Paged([gh.pull_json(p) for p in newest_first])


def _create_pull(gh: FakeGitHub, *, body: Json, **_: Any) -> tuple[int, Json]:
    head, base = str(body.get("head", "")), str(body.get("base", ""))
    for name in ("title", "head", "base"):
        if not body.get(name):
            raise _invalid("PullRequest", name, "missing_field")
    if gh.branch_sha(base) is None or gh.branch_sha(head) is None:
        raise _invalid("PullRequest", "base" if gh.branch_sha(base) is None else "head")
    if any(p.head == head and p.state == "open" for p in gh.pulls.values()):
        raise _refused(f"A pull request already exists for {gh.owner}:{head}.")
    if not gh.git("rev-list", f"refs/heads/{base}..refs/heads/{head}"):
        raise _refused(f"No commits between {base} and {head}")
    number = max(gh.pulls, default=0) + 1
    pull = Pull(
        number, str(body["title"]), str(body.get("body") or ""), head, base, gh.login, _now()
    )
    gh.pulls[number] = pull
    return 201, gh.pull_json(pull, single=True)


def _get_pull(gh: FakeGitHub, number: str, *, headers: Any, **_: Any) -> Json | str:
    pull = gh.pull(number)
    if "application/vnd.github.diff" in headers.get("Accept", ""):
        return gh.git("diff", "--no-color", gh.diff_range(pull)) + "\n"
    return gh.pull_json(pull, single=True)


def _update_pull(gh: FakeGitHub, number: str, *, body: Json, **_: Any) -> Json:
    pull = gh.pull(number)
    if "body" in body:  # GitHub edits the description in place; title and state likewise
        pull.body = str(body["body"] or "")
    if body.get("state") == "closed" and pull.state == "open":
        pull.frozen_head, pull.state = gh.head_sha(pull), "closed"
    return gh.pull_json(pull, single=True)


def _files(gh: FakeGitHub, number: str, **_: Any) -> Paged:
    pull = gh.pull(number)
    listing = gh.git("diff", "--name-only", "--no-renames", gh.diff_range(pull))
    return Paged([{"filename": path} for path in listing.splitlines() if path])


def _reviews(gh: FakeGitHub, number: str, **_: Any) -> Paged:
    return Paged(gh.pull(number).reviews)


def _create_review(gh: FakeGitHub, number: str, *, body: Json, **_: Any) -> Json:
    pull = gh.pull(number)
    event = body.get("event")
    states = {"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED", "COMMENT": "COMMENTED"}
    if event not in states:
        raise Reply(422, "Unprocessable Entity", errors=["Review event is not valid"])
    if event != "APPROVE" and not body.get("body"):
        raise Reply(422, "Unprocessable Entity", errors=["Review body is required"])
    review = {
        "user": {"login": gh.login},
        "state": states[event],
        "body": body.get("body") or "",
        "submitted_at": _now(),
    }
    pull.reviews.append(review)
    return review


def _merge(gh: FakeGitHub, number: str, *, body: Json, **_: Any) -> Json:
    pull = gh.pull(number)
    head = gh.head_sha(pull)
    if pull.state != "open":
        raise Reply(405, "Pull Request is not mergeable")
    if body.get("sha") and body["sha"] != head:
        raise Reply(409, "Head branch was modified. Review and try the merge again.")
    if body.get("merge_method", "merge") != "merge":
        raise Reply(405, "Only merge commits are allowed on this repository.")
    old = gh.branch_sha(pull.base) or ""
    try:
        tree = gh.git("merge-tree", "--write-tree", old, head).split()[0]
    except subprocess.CalledProcessError as exc:
        raise Reply(405, "Pull Request is not mergeable") from exc
    title = f"Merge pull request #{pull.number} from {gh.owner}/{pull.head}"  # GitHub's default
    message = f"{body.get('commit_title') or title}\n\n{body.get('commit_message') or pull.title}"
    env = {**os.environ, **_MERGER}
    sha = gh.git("commit-tree", tree, "-p", old, "-p", head, "-m", message, env=env)
    gh.git("update-ref", f"refs/heads/{pull.base}", sha, old)
    pull.state, pull.merged_at, pull.merge_commit_sha = "merged", _now(), sha
    pull.frozen_head = head
    return {"sha": sha, "merged": True, "message": "Pull Request successfully merged"}


def _comments(gh: FakeGitHub, number: str, **_: Any) -> Paged:
    return Paged(gh.pull(number).comments)


def _create_comment(gh: FakeGitHub, number: str, *, body: Json, **_: Any) -> tuple[int, Json]:
    pull = gh.pull(number)
    if not body.get("body"):
        raise _invalid("IssueComment", "body", "missing_field")
    comment = {"user": {"login": gh.login}, "body": body["body"], "created_at": _now()}
    pull.comments.append(comment)
    return 201, comment


def _add_labels(gh: FakeGitHub, number: str, *, body: Json, **_: Any) -> list[Json]:
    pull = gh.pull(number)
    for label in body.get("labels") or []:
        if label not in pull.labels:
            pull.labels.append(str(label))
    return [{"name": label} for label in pull.labels]


def _check_runs(gh: FakeGitHub, ref: str, **_: Any) -> Paged:
    return Paged(list(gh.checks.get(ref, [])), key="check_runs")


_ROUTES: list[tuple[str, str, Callable[..., Any]]] = [
    (r"pulls", "GET", _list_pulls),
    (r"pulls", "POST", _create_pull),
    (r"pulls/(\d+)", "GET", _get_pull),
    (r"pulls/(\d+)", "PATCH", _update_pull),
    (r"pulls/(\d+)/files", "GET", _files),
    (r"pulls/(\d+)/reviews", "GET", _reviews),
    (r"pulls/(\d+)/reviews", "POST", _create_review),
    (r"pulls/(\d+)/merge", "PUT", _merge),
    (r"issues/(\d+)/comments", "GET", _comments),
    (r"issues/(\d+)/comments", "POST", _create_comment),
    (r"issues/(\d+)/labels", "POST", _add_labels),
    (r"commits/([0-9a-f]{40})/check-runs", "GET", _check_runs),
]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    github: FakeGitHub  # set on the subclass made per server

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        status, headers, payload = self.github.handle(self.command, self.path, self.headers, raw)
        self.send_response(status)
        headers.setdefault("Content-Type", "application/json; charset=utf-8")
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_PUT = do_PATCH = _serve

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the test reads `FakeGitHub.requests` instead."""


@contextmanager
def running_github(
    bare: Path,
    *,
    owner: str = "acme",
    name: str = "deploy",
    token: str = "ghp-test-token",
    login: str = "kubecrew-bot",
    max_per_page: int = 100,
) -> Iterator[FakeGitHub]:
    """A fake GitHub on a loopback port, serving `owner/name` backed by the bare repo `bare`."""
    github = FakeGitHub(
        bare, owner=owner, name=name, token=token, login=login, max_per_page=max_per_page
    )
    handler = type("Handler", (_Handler,), {"github": github})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    github.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-github", daemon=True
    )
    thread.start()
    try:
        yield github
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def hosted_clone(manifests: Path, root: Path) -> Path:
    """`manifests` pushed to a bare repository under `root` (what `running_github` serves:
    `github_side(clone)`) and a clone of it to work in; the clone's path."""
    bare = root / "github" / "deploy.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(manifests), str(bare)], check=True)
    work = root / "clone"
    subprocess.run(["git", "clone", "-q", str(bare), str(work)], check=True)
    return work


def github_side(clone: Path) -> Path:
    """The bare repository a `hosted_clone` was cloned from."""
    return clone.parent / "github" / "deploy.git"
