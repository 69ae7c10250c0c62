"""Both PR providers can replace an open PR's description and read the files it changes whole,
before and after (open: from where it forked; merged: the merge against its first parent).
GitHub is the local server speaking its REST API over a real bare repository."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.errors import Conflict
from mcp_servers.gitops.providers import provider_for
from mcp_servers.gitops.providers.base import Provider
from mcp_servers.gitops.repo import Repository
from mcp_servers.gitops.server import build
from tests.support.github import FakeGitHub, running_github
from tests.support.gitops import Call, git, session, settings_for
from tests.support.pr_channel import WEB

TOKEN = "ghp-kubecrew-pr-body-41c2"
PDB = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, namespace: shop}\n"


def open_pr(repo: Path, **github: Any) -> tuple[Provider, int]:
    """web to 2 replicas and a new PDB beside it, in one PR."""
    settings = settings_for(repo, **github)
    numbers: list[int] = []

    async def script(call: Call) -> None:
        done = await call(
            "propose_change", title="Two replicas and a budget", path=WEB, kind="Deployment",
            name="web", edits=[{"path": "spec.replicas", "value": 2}], body="First words.",
            new_files={"apps/shop/pdb.yaml": PDB},
        )  # fmt: skip
        numbers.append(int(done["number"]))

    session(build(settings), script)
    clone = Repository(repo, author_name="kubecrew", author_email="kubecrew@localhost")
    return provider_for(settings, clone), numbers[0]


def check_files(provider: Provider, number: int, base_text: str) -> None:
    changes = {c.path: c for c in provider.file_changes(number)}
    assert set(changes) == {WEB, "apps/shop/pdb.yaml"}
    assert changes[WEB].before == base_text
    assert changes[WEB].after == base_text.replace("replicas: 1 ", "replicas: 2 ")
    assert (changes["apps/shop/pdb.yaml"].before, changes["apps/shop/pdb.yaml"].after) == (
        None, PDB,
    )  # fmt: skip


def test_local_body_update_and_files_open_then_merged(manifests: Path) -> None:
    base_text = (manifests / WEB).read_text()
    provider, number = open_pr(manifests)
    check_files(provider, number, base_text)

    updated = provider.set_body(number, body="Second words.")
    again = provider.get(number).pr
    assert (updated.body, again.body, again.title) == (
        "Second words.", "Second words.", "Two replicas and a budget",
    )  # fmt: skip

    (manifests / "README.md").write_text("main moved on\n")  # the base moves after the fork
    git(manifests, "add", "README.md")
    git(manifests, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "readme")
    check_files(provider, number, base_text)  # still only the PR's own change

    provider.review(number, author="alice-gh", verdict="approve", body="")
    provider.merge(number)
    check_files(provider, number, base_text)
    with pytest.raises(Conflict, match="is merged; only open ones can change"):
        provider.set_body(number, body="too late")


@pytest.fixture
def github(manifests: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    bare = tmp_path / "github" / "deploy.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(manifests), str(bare)], check=True)
    work = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(bare), str(work)], check=True)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)  # where provider_for reads the token
    with running_github(bare, token=TOKEN) as fake:
        yield work, fake


def test_github_body_update_and_files_from_what_github_has(
    github: tuple[Path, FakeGitHub],
) -> None:
    clone, fake = github
    base_text = (clone / WEB).read_text()
    provider, number = open_pr(
        clone, provider="github", github_repo="acme/deploy", github_api_url=fake.url
    )
    head = fake.pulls[number].head
    git(clone, "branch", "-D", head)  # as on a machine that did not open the PR
    check_files(provider, number, base_text)

    provider.set_body(number, body="Second words.")
    assert fake.pulls[number].body == "Second words."
    assert provider.get(number).pr.body == "Second words."

    provider.review(number, author="kubecrew-bot", verdict="approve", body="")
    provider.merge(number)
    check_files(provider, number, base_text)
    with pytest.raises(Conflict, match="is merged; only open ones can change"):
        provider.set_body(number, body="too late")
