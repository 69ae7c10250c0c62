from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.server import Sandbox
from tests.support.changes import Crew
from tests.support.kubectl import Kubectl


@pytest.fixture
def crew(sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path) -> Crew:
    made = Crew(sandbox.kubeconfig, kubectl, tmp_path)
    made.deploy_web("staging")
    return made
