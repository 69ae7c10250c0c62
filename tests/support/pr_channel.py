"""The PR channel's world: the issue's escalated downscale in a SQLite policy store with the
people file beside it (`Policy`, which the `policy` fixture of tests/kubecrew/conftest.py
makes), the crew's PR making that change through the gitops tools (`crew_pr`), and the passes
that read reviews (`synced`) and comments (`comments_synced`), run as a front door runs them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.policy.negotiation import negotiate
from core.policy.people import People, load_people
from core.policy.proposals import ApprovalRequest
from core.policy.settings import SHIPPED
from core.policy.store.sqlite import SqliteStore
from kubecrew.channels.pr import comments as pr_comments
from kubecrew.channels.pr.approvals import Ledger, Outcome, ledger_path, sync
from kubecrew.channels.pr.comments import Handled
from kubecrew.channels.slack.owners import load_policies
from mcp_servers.gitops.providers import provider_for
from mcp_servers.gitops.providers.base import Provider
from mcp_servers.gitops.repo import Repository
from mcp_servers.gitops.server import build
from mcp_servers.gitops.yamledit import Edit, edit
from tests.support.gitops import Call, git, session, settings_for
from tests.support.policies import defaults, downscale

WEB = "apps/shop/web.yaml"
PEOPLE = """\
apiVersion: kubecrew.io/v1alpha1
kind: People
people:
  - {name: alice, groups: [shop-admins], github: alice-gh}
  - {name: bob, groups: [developers], github: bob-gh}
"""


@dataclass
class Policy:
    """The store with one escalated request, and the people file beside it."""

    store: SqliteStore
    request: ApprovalRequest
    people: People
    people_file: Path

    def now(self) -> ApprovalRequest:
        return self.store.approval(self.request.id)


def synced(provider: Provider, policy: Policy, *, crew_author: str = "kubecrew") -> list[Outcome]:
    """One sync as `kubecrew approvals sync-prs` runs it: a fresh ledger handle each time, as
    after a restart, on the file beside the store."""
    ledger = Ledger(ledger_path(str(policy.store.path)))
    try:
        return sync(
            provider,
            policy.store,
            policy.people,
            datetime.now(UTC),
            crew_author=crew_author,
            ledger=ledger,
        )
    finally:
        ledger.close()


def live_count_in_git(repo_path: Path, *, pushed: bool = False) -> None:
    """main says what the cluster runs before the downscale (web at 5 replicas, as the request's
    `from`), committed as a person would; `pushed` to the clone's origin (GitHub)."""
    manifest = repo_path / WEB
    before = manifest.read_text()
    manifest.write_text(edit(before, [Edit("spec.replicas", 5)], kind="Deployment"))
    if manifest.read_text() == before:
        return
    git(repo_path, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qam", "web at 5")
    if pushed:
        git(repo_path, "push", "-q", "origin", "main")


def crew_pr(
    repo_path: Path, request_id: str, *, replicas: int = 1, **github: Any
) -> tuple[Provider, int]:
    """The crew's PR scaling web down from 5 (the request's scale 5 -> 1 by default) carrying
    `request_id`, opened through the gitops tools."""
    live_count_in_git(repo_path, pushed=bool(github))
    settings = settings_for(repo_path, **github)
    opened: dict[str, Any] = {}

    async def script(call: Call) -> None:
        opened.update(
            await call(
                "propose_change",
                title="Scale web down",
                path=WEB,
                kind="Deployment",
                name="web",
                edits=[{"path": "spec.replicas", "value": replicas}],
                body="web has used under 10% CPU for an hour.",
                approval=request_id,
            )
        )

    session(build(settings), script)
    repo = Repository(repo_path, author_name="kubecrew", author_email="kubecrew@localhost")
    return provider_for(settings, repo), int(opened["number"])


def comments_synced(
    provider: Provider, repo_path: Path, world: Policy, *, crew_author: str = "kubecrew"
) -> list[Handled]:
    """One pass over the comments as `kubecrew approvals sync-prs` makes it: a fresh ledger
    handle each time (as after a restart), on the file beside the store."""
    ledger = Ledger(ledger_path(str(world.store.path)))
    repo = Repository(repo_path, author_name=crew_author, author_email="kubecrew@localhost")
    try:
        return pr_comments.sync(
            provider,
            repo,
            world.store,
            world.people,
            load_policies([SHIPPED]),
            datetime.now(UTC),
            crew_author=crew_author,
            ledger=ledger,
        )
    finally:
        ledger.close()


@contextmanager
def escalated(tmp_path: Path) -> Iterator[Policy]:
    """The issue's downscale, refused as countered and so escalated to shop-admins, in a
    SQLite store under `tmp_path`, with the people file beside it."""
    store = SqliteStore(tmp_path / "policy" / "store.sqlite")
    now = datetime.now(UTC)
    proposal = downscale(created=now, counters="refuse")
    store.propose(proposal)
    negotiate(store, defaults(), proposal.id, now=now)
    (request,) = [r for r in store.approvals() if r.proposal == proposal.id]
    people_file = tmp_path / "people.yaml"
    people_file.write_text(PEOPLE)
    try:
        yield Policy(store, request, load_people(people_file), people_file)
    finally:
        store.close()
