"""A model that answers "fixed" without calling any tool does not make the loop report fixed:
validation decides. The shop ran nginx:1.26, then nginx:1.27, then a typo; both images crash
in this cluster, so each fix the servers offer is merged, fails validation and is reverted, and
the loop escalates to a person with the evidence, whatever the model said.
"""

from __future__ import annotations

from sandbox.server import Sandbox
from tests.agents.runtime.model_loop.model_team import ModelTeam
from tests.agents.runtime.model_loop.scripts import claims_fixed
from tests.support.heals import CRASH, TYPO, crash_once_planned, history


def test_a_model_that_says_fixed_without_a_tool_call_does_not_make_the_loop_report_fixed(
    team: ModelTeam, sandbox: Sandbox
) -> None:
    history(team, sandbox)  # nginx:1.26 -> nginx:1.27 -> a typo
    sandbox.call(
        lambda c: c.faults.add({"kind": "app-profile", "image": "nginx:1.26", "changes": CRASH})
    )  # nginx:1.26 crashes here, and nginx:1.27 once the fix is planned: no fix on offer holds
    team.script = claims_fixed

    healed = team.heal("web", on_node=crash_once_planned(team, sandbox))

    [model] = team.models
    assert len(model.seen) == 1 and [m.type for m in model.seen[0]] == ["system", "human"]
    assert healed.outcome == "escalated", healed.summary
    assert [a["verdict"] for a in healed.attempts] == ["failed", "failed"], healed.summary
    for attempt in healed.attempts:
        assert any("restarted" in line for line in attempt["evidence"]), attempt["evidence"]
        assert attempt["undone"].startswith("reverted PR #")
    assert team.image() == TYPO  # both reverted: the typo is back, for a person to decide
