"""An OOM kill, a failing readiness probe, a crash loop from a bad command and a missing
ConfigMap, merged to git and synced, are healed by the deterministic loop with a merged PR: the
memory limit, the probe's port, or the containers of the last good revision written back to the
manifest (a rollout undo behind git's back would be reverted by the next sync; a ConfigMap of
empty placeholders is never created unattended). Each is validated once the controller has
observed the new spec, not judged by the old revision's crashing pods. The faults are
tests/support/faults.py; the same faults with a scripted model planning are in
tests/agents/runtime/model_loop/."""

from __future__ import annotations

from typing import Any

import pytest

from sandbox.server import Sandbox
from tests.support.faults import Fault, bad_command, failing_probe, missing_config, oom
from tests.support.gitops import git
from tests.support.team import WEB, Team


@pytest.mark.parametrize(
    "breaks",
    [
        pytest.param(oom, id="oom-killed"),
        pytest.param(failing_probe, id="failing-probe"),
        pytest.param(bad_command, id="bad-command"),
        pytest.param(missing_config, id="missing-configmap"),
    ],
)
def test_the_fault_is_healed_by_a_merged_pr(team: Team, sandbox: Sandbox, breaks: Any) -> None:
    fault: Fault = breaks(team, sandbox)
    healed = team.heal("web")

    assert healed.outcome == "fixed", healed.summary
    [attempt] = healed.attempts
    assert attempt["fix"] == fault.fix and attempt["verdict"] == "held", attempt
    assert f"diagnose no longer finds {fault.code}" in attempt["evidence"]
    manifest = git(team.repo, "show", f"main:{WEB}")
    assert fault.mended in manifest and fault.broken not in manifest, manifest
