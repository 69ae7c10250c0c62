"""The loop's GitOps world (tests/support/team.py): the shop's repository synced to a sandbox,
the policy store every server shares, and the Dev Team agent's home."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.server import Sandbox
from tests.support.kubectl import Kubectl
from tests.support.team import Team, make_team


@pytest.fixture
def team(sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path) -> Team:
    return make_team(sandbox, kubectl, tmp_path)
