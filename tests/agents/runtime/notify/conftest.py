"""The watcher's plan for the tests of this folder: the kube server on the test's sandbox,
watching namespace shop, incidents in a SQLite file of the test's own (`Watcher`, which runs it
as in production, is watcher.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.runtime.notify.watcher import WatchPlan
from agents.runtime.toolbox import Servers
from mcp_servers.kube.settings import KubeSettings
from sandbox.server import Sandbox


@pytest.fixture
def plan(sandbox: Sandbox, tmp_path: Path) -> WatchPlan:
    return WatchPlan(
        servers=Servers(kube=KubeSettings(kubeconfig=sandbox.kubeconfig)),
        namespaces=("shop",),
        every_s=None,
        wait_s=2,
        incidents=tmp_path / "incidents.sqlite",
    )
