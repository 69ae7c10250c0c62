"""The Cluster Operator's and the Platform agent's worlds with a scripted model planning every
conversation: `operator` is a `ModelOperator` reading capacity, `platform` a `ModelPlatform`
reading egress (model_agents.py); a test that needs another script builds its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.server import Sandbox
from tests.agents.runtime.model_scenes.model_agents import ModelOperator, ModelPlatform
from tests.agents.runtime.model_scenes.scripts import capacity_reader, egress_reader
from tests.support.kubectl import Kubectl


@pytest.fixture
def operator(sandbox: Sandbox, tmp_path: Path) -> ModelOperator:
    return ModelOperator(sandbox, tmp_path, capacity_reader)


@pytest.fixture
def platform(sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path) -> ModelPlatform:
    return ModelPlatform(sandbox, kubectl, tmp_path, egress_reader)
