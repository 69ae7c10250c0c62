"""The loop's GitOps world (tests/support/team.py) with a model planning every heal: the `team`
here is a `ModelTeam` (model_team.py), so the deterministic scenes run unchanged, planner aside.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.server import Sandbox
from tests.agents.runtime.model_loop.model_team import ModelTeam, model_team
from tests.support.kubectl import Kubectl
from tests.support.team import make_team


@pytest.fixture
def team(sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path) -> ModelTeam:
    return model_team(make_team(sandbox, kubectl, tmp_path))
