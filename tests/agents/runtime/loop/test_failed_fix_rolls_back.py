"""A fix that fails validation is rolled back and the next one tried; memory then ranks the
failed fix lower for that fingerprint; when every fix fails, the loop escalates and stops.

The shop ran nginx:1.26, then nginx:1.27, then a typo. nginx:1.27 starts crashing in this
cluster once the fix is planned (an app-profile fault on that image), so the best-ranked fix
(the image the last good revision ran) starts, restarts, and fails validation: its PR is
reverted by a revert PR, merged and synced, and the next fix (nginx:1.26) heals the shop. The
scene and its checks: tests/support/heals.py, which the model-planned twin runs too."""

from __future__ import annotations

from sandbox.server import Sandbox
from tests.support.heals import a_fix_that_fails_validation_is_reverted_and_the_next_one_heals
from tests.support.team import Team


def test_a_fix_that_fails_validation_is_reverted_and_the_next_one_heals(
    team: Team, sandbox: Sandbox
) -> None:
    a_fix_that_fails_validation_is_reverted_and_the_next_one_heals(team, sandbox)
