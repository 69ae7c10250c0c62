"""An OOM kill and a failing readiness probe, merged to git and synced, are healed by the
deterministic loop: the memory limit or the probe's port changed by a merged PR, validated once
the controller has observed the new spec (not judged by the old revision's crashing pods); a
crash loop from a bad command is escalated, since only the program's owner knows the right one.
The same faults with a scripted model planning are in tests/agents/llm/."""

from __future__ import annotations

from typing import Any

import pytest

from sandbox.server import Sandbox
from tests.agents.llm.faults import Fault, bad_command, failing_probe, oom
from tests.agents.loop.conftest import WEB, Team
from tests.mcp.gitops.conftest import git


@pytest.mark.parametrize(
    "breaks",
    [
        pytest.param(oom, id="oom-killed"),
        pytest.param(failing_probe, id="failing-probe"),
        pytest.param(bad_command, id="bad-command"),
    ],
)
def test_the_fault_is_healed_by_pr_or_escalated(team: Team, sandbox: Sandbox, breaks: Any) -> None:
    fault: Fault = breaks(team, sandbox)
    head = git(team.repo, "rev-parse", "main")

    healed = team.heal("web")

    if not fault.healed:
        assert healed.outcome == "escalated" and not healed.attempts, healed.summary
        assert git(team.repo, "rev-parse", "main") == head
        return
    assert healed.outcome == "fixed", healed.summary
    [attempt] = healed.attempts
    assert attempt["fix"] == fault.fix and attempt["verdict"] == "held", attempt
    assert f"diagnose no longer finds {fault.code}" in attempt["evidence"]
    manifest = git(team.repo, "show", f"main:{WEB}")
    assert fault.mended in manifest and fault.broken not in manifest, manifest
