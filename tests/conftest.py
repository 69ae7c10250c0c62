"""Fixtures every test may use: a sandbox API server over real HTTPS, real kubectl on it, a git
repository of the shop's manifests, and the guard that keeps every real model out of the tests.

`KUBECREW_MODEL_GUARD=1` is set for the whole session: building a model from the environment
raises, and the model brain accepts only the scripted model (agents/runtime/scripted.py), so
no test can reach a provider whatever KUBECREW_MODEL says.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agents.runtime.brain import GUARD_ENV, MODEL_ENV
from kubecrew.demo.shop import NAMESPACE as SHOP_NAMESPACE
from kubecrew.demo.shop import WEB as SHOP_WEB
from mcp_servers.common.prelude import CACHE_ENV
from sandbox.server import Options, Sandbox
from tests.support.clock import RATE
from tests.support.gitops import git
from tests.support.kubectl import Kubectl

# Shared check functions live in these helper modules; rewrite their asserts as pytest does in
# test modules, so a failure still shows the compared values (tests/support/ registers its own).
pytest.register_assert_rewrite("tests.sandbox.table_objects", "tests.sandbox.validation_objects")


# The longest files start first, so the two workers of `make test` finish together: with
# `--dist loadfile --no-loadscope-reorder` a file is one unit of work, handed out in collection
# order (xdist's default reorder, most tests first, left the 13-minute corpus run for last).
FIRST = ("tests/kubecrew/evals/test_corpus.py", "tests/kubecrew/demo/test_demo_scenes.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {path: n for n, path in enumerate(FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(FIRST)))


@pytest.fixture(autouse=True, scope="session")
def model_guard() -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in (GUARD_ENV, MODEL_ENV)}
    os.environ[GUARD_ENV] = "1"
    os.environ.pop(MODEL_ENV, None)
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(autouse=True, scope="session")
def mcp_manifests(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The manifests stdio MCP servers answer their first questions from (prelude.py) go to a
    directory of this session's, not the user's cache."""
    saved = os.environ.get(CACHE_ENV)
    os.environ[CACHE_ENV] = str(tmp_path_factory.mktemp("mcp-manifests"))
    yield
    if saved is None:
        os.environ.pop(CACHE_ENV, None)
    else:
        os.environ[CACHE_ENV] = saved


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Sandbox]:
    """A fresh sandbox per test (about 0.1 s to start)."""
    with Sandbox(Options(home=tmp_path / "sandbox", nodes=3, rate=RATE)) as running:
        yield running


@pytest.fixture(scope="module")
def shared_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    """One sandbox for a whole module, for tests that only read or use their own namespace."""
    home = tmp_path_factory.mktemp("shared-sandbox")
    with Sandbox(Options(home=home, nodes=3, rate=RATE)) as running:
        yield running


@pytest.fixture
def kubectl(sandbox: Sandbox, tmp_path: Path) -> Kubectl:
    return Kubectl(sandbox.kubeconfig, tmp_path / "kube-cache")


@pytest.fixture
def shared_kubectl(shared_sandbox: Sandbox, tmp_path: Path) -> Kubectl:
    """Real kubectl against the module's shared sandbox, with a fresh discovery cache."""
    return Kubectl(shared_sandbox.kubeconfig, tmp_path / "kube-cache")


@pytest.fixture
def namespace(shared_kubectl: Kubectl, request: pytest.FixtureRequest) -> str:
    """A namespace of this test's own in the shared sandbox, named after the test."""
    readable = "".join(ch if ch.isalnum() else "-" for ch in request.node.name.lower())[:40]
    digest = hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:8]
    name = f"t-{readable.strip('-')}-{digest}"
    shared_kubectl("create", "namespace", name)
    return name


@pytest.fixture
def manifests(tmp_path: Path) -> Path:
    repo = tmp_path / "manifests"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "apps" / "shop").mkdir(parents=True)
    (repo / "apps" / "shop" / "web.yaml").write_text(SHOP_WEB)
    (repo / "namespaces.yaml").write_text(SHOP_NAMESPACE)
    git(repo, "add", ".")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "-m", "initial")
    return repo
