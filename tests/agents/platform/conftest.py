"""The Platform agent's tests' world: `platform` is a `Platform` (tests/support/platform_agent.py)
on the test's own sandbox: team-a from its GitOps repository, team-b labelled by hand, scratch
outside the class, and the test's own policy documents and store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox.server import Sandbox
from tests.support.kubectl import Kubectl
from tests.support.platform_agent import Platform


@pytest.fixture
def platform(sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path) -> Iterator[Platform]:
    yield Platform(sandbox, kubectl, tmp_path)
