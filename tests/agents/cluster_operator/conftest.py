"""The Cluster Operator's tests' world: `operator` is an `Operator`
(tests/support/cluster_operator.py) on the test's own sandbox, with the test's own policy
documents and store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox.server import Sandbox
from tests.support.cluster_operator import Operator


@pytest.fixture
def operator(sandbox: Sandbox, tmp_path: Path) -> Iterator[Operator]:
    yield Operator(sandbox, tmp_path)
