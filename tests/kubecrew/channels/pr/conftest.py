"""GitHub for the PR channel's comment tests: the `manifests` repository (tests/conftest.py)
cloned bare as GitHub's copy of it, and the local server speaking GitHub's REST API over that
bare repository (a test module that needs another GitHub defines its own). The PR channel's
store and people file are the `policy` fixture (tests/kubecrew/conftest.py)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.github import FakeGitHub, running_github

TOKEN = "ghp-kubecrew-comments-9b2d"


@pytest.fixture
def clone(manifests: Path, tmp_path: Path) -> Path:
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
