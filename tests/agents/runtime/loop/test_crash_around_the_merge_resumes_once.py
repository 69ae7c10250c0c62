"""A heal process killed by SIGKILL after its PR was opened (before the merge), or after the
merge (before the sync), then run again on its thread, finishes: the open PR is merged once
(its approving review not repeated), the merged one is not merged again, and the sync, whose
dry run still shows the change, runs once. See `test_crash_before_the_pr_resumes_once`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.server import Sandbox
from tests.support.crashes import crash_and_resume
from tests.support.team import Team


@pytest.mark.parametrize(
    "kill_at",
    [
        pytest.param("merge_pr", id="pr-opened-before-the-merge"),
        pytest.param("sync", id="merged-before-the-sync"),
    ],
)
def test_a_run_killed_around_the_merge_resumes_without_a_second_mutation(
    team: Team, sandbox: Sandbox, tmp_path: Path, kill_at: str
) -> None:
    crash_and_resume(team, sandbox, tmp_path, kill_at)
