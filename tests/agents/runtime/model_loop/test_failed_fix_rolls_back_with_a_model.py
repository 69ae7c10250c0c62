"""A fix that fails validation is reverted and the next one tried, with a scripted model
planning `learn`: nginx:1.27 (the last good revision's image) crashes in this cluster, so its
PR is reverted by a revert PR and nginx:1.26 heals the shop; the same failure again ranks the
fix that failed below the one that held. The deterministic test's own checks run unchanged
(tests/support/heals.py); the model only chose what to read, so validation, not the model, decided.
"""

from __future__ import annotations

from agents.runtime.scripted import shown
from sandbox.server import Sandbox
from tests.agents.runtime.model_loop.model_team import ModelTeam
from tests.support.heals import (
    PULL_FAILING,
    a_fix_that_fails_validation_is_reverted_and_the_next_one_heals,
)


def test_a_fix_that_fails_validation_is_reverted_and_the_next_tried_when_a_model_plans(
    team: ModelTeam, sandbox: Sandbox
) -> None:
    a_fix_that_fails_validation_is_reverted_and_the_next_one_heals(team, sandbox)

    assert len(team.models) == 2  # one model per heal run, each learning from the live pods
    for model in team.models:
        status = shown(model.seen[-1], "describe")["summary"]["status"]
        assert status in PULL_FAILING  # which of the two depends on the kubelet's back-off timing
    assert team.called.count("revert_pr") == 1 and team.called.count("merge_pr") == 4
