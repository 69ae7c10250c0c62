"""Fixtures every test may use: a sandbox API server over real HTTPS, and real kubectl on it."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox.server import Options, Sandbox
from tests.support.kubectl import Kubectl

# Shared check functions live in these helper modules; rewrite their asserts as pytest does in
# test modules, so a failure still shows the compared values.
pytest.register_assert_rewrite("tests.sandbox.table_objects", "tests.sandbox.validation_objects")


# Test sandboxes live ten times faster than life: backoffs, probes, grace periods and node
# heartbeats pass in a tenth of the real time, so no test waits real minutes.
RATE = 10.0


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
