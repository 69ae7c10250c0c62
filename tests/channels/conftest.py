"""The PR channel's world for comments: the PR channel's repository, store and people file
(tests/pr_channel/conftest.py), the shipped policies (the shop is owned by shop-admins), and
GitHub as the local server speaking its REST API over a real bare repository."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.policy.settings import SHIPPED
from kubecrew.channels.pr import comments as pr_comments
from kubecrew.channels.pr.approvals import Ledger, ledger_path
from kubecrew.channels.pr.comments import Handled
from kubecrew.channels.slack.owners import load_policies
from mcp_servers.gitops.providers.base import Provider
from mcp_servers.gitops.repo import Repository
from tests.mcp.gitops.conftest import manifests  # noqa: F401  (a fixture: the repository)
from tests.pr_channel.conftest import Policy
from tests.pr_channel.conftest import policy as policy  # a fixture: the store and people
from tests.support.github import FakeGitHub, running_github

TOKEN = "ghp-kubecrew-comments-9b2d"


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


@pytest.fixture
def clone(manifests: Path, tmp_path: Path) -> Path:  # noqa: F811
    bare = tmp_path / "github" / "deploy.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(manifests), str(bare)], check=True)
    work = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(bare), str(work)], check=True)
    return work


@pytest.fixture
def github(clone: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)  # where provider_for reads the token
    with running_github(clone.parent / "github" / "deploy.git", token=TOKEN) as fake:
        yield fake
