"""The Cluster Operator's tests' world: `operator` is an `Operator`
(tests/support/cluster_operator.py) on the test's own sandbox, with the test's own policy
documents and store; `west` a second, smaller cluster (one node of 4 CPUs) for the fleet's
tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox.server import Options, Sandbox
from tests.support.clock import RATE
from tests.support.cluster_operator import Operator


@pytest.fixture
def operator(sandbox: Sandbox, tmp_path: Path) -> Iterator[Operator]:
    yield Operator(sandbox, tmp_path)


@pytest.fixture
def west(tmp_path: Path) -> Iterator[Sandbox]:
    with Sandbox(Options(home=tmp_path / "west", nodes=1, rate=RATE)) as running:
        yield running
