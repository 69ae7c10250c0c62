"""A heal process killed by SIGKILL in the middle of a mutation, then run again on its thread,
finishes that mutation: one proposal, one PR, one merge, one sync, and the image healed.

The child (tests/support/crashing_heal.py) dies at a tool call before the call is sent. Here:
before the PR exists, once with the policy decision checkpointed, and once in the hardest
window, a proposal the store recorded whose id never reached the checkpoint, played by
delivering the killed process's `propose` call to the policy server ourselves, as the network
would have: the resumed run must find it by its key. `test_crash_around_the_merge_resumes_once`
kills it after the PR was opened (before the merge) and after the merge (before the sync); both
run `crash_and_resume` (tests/support/crashes.py).
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
        pytest.param("propose", id="proposed-but-not-checkpointed"),
        pytest.param("propose_change", id="decided-before-the-pr"),
    ],
)
def test_a_run_killed_before_its_pr_resumes_without_a_second_proposal(
    team: Team, sandbox: Sandbox, tmp_path: Path, kill_at: str
) -> None:
    crash_and_resume(team, sandbox, tmp_path, kill_at)
