"""The Dev Team agent on the test's sandbox, with an agent home of its own (`Agent`,
tests/support/dev_team.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.server import Sandbox
from tests.support.dev_team import Agent


@pytest.fixture
def agent(sandbox: Sandbox, tmp_path: Path) -> Agent:
    return Agent(sandbox.kubeconfig, tmp_path / "agent-home")
