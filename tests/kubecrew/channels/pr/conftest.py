"""GitHub for the PR channel's comment tests: the `manifests` repository (tests/conftest.py)
cloned bare as GitHub's copy of it, and the local server speaking GitHub's REST API over that
bare repository (a test module that needs another GitHub defines its own). The PR channel's
store and people file are the `policy` fixture (tests/kubecrew/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.github import FakeGitHub, github_side, hosted_clone, running_github

TOKEN = "ghp-kubecrew-comments-9b2d"


@pytest.fixture
def clone(manifests: Path, tmp_path: Path) -> Path:
    return hosted_clone(manifests, tmp_path)


@pytest.fixture
def github(clone: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)  # where provider_for reads the token
    with running_github(github_side(clone), token=TOKEN) as fake:
        yield fake
