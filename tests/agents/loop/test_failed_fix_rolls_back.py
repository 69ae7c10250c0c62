"""A fix that fails validation is rolled back and the next one tried; memory then ranks the
failed fix lower for that fingerprint; when every fix fails, the loop escalates and stops.

The shop ran nginx:1.26, then nginx:1.27, then a typo. nginx:1.27 starts crashing in this
cluster once the fix is planned (an app-profile fault on that image), so the best-ranked fix
(the image the last good revision ran) starts, restarts, and fails validation: its PR is
reverted by a revert PR, merged and synced, and the next fix (nginx:1.26) heals the shop."""

from __future__ import annotations

from collections.abc import Callable

from sandbox.server import Sandbox
from tests.agents.loop.conftest import Team
from tests.mcp.kube.test_diagnosis import Doctor
from tests.support.waiting import eventually

CRASH = {"runs_forever": False, "run_seconds": 1, "exit_code": 1}


def history(team: Team, sandbox: Sandbox) -> None:
    """nginx:1.26 -> nginx:1.27 (both rolled out) -> a typo."""
    team.commit("web: 1.26", "nginx:1.26")
    team.sync()
    team.rolled_out()
    team.commit("web: 1.27", "nginx:1.27")
    team.sync()
    team.rolled_out()
    breaks(team, sandbox)


def crash_once_planned(team: Team, sandbox: Sandbox) -> Callable[[str], None]:
    """nginx:1.27 starts crashing once the loop has planned its fix: the revision that ran it
    was good while the loop learned (its pods Ready), and is bad before the fix is validated.
    Injected earlier, the old pods could crash before `learn` and rank 1.27 down at once; so
    the loop waits (this callback blocks it) until a 1.27 pod has restarted."""
    injected: list[str] = []

    def restarted() -> bool:
        pods = team.kubectl.json("get", "pods", "-n", "shop", "-l", "app=web")["items"]
        return any(
            str(s.get("image", "")).endswith("nginx:1.27") and s.get("restartCount", 0) > 0
            for pod in pods
            for s in pod.get("status", {}).get("containerStatuses") or []
        )

    def on_node(node: str) -> None:
        if node == "plan" and not injected:
            injected.append(node)
            fault = {"kind": "app-profile", "image": "nginx:1.27", "changes": CRASH}
            sandbox.call(lambda c: c.faults.add(fault))
            eventually(restarted, what="a nginx:1.27 pod restarted by the fault")

    return on_node


def breaks(team: Team, sandbox: Sandbox) -> None:
    team.commit("web: typo", "nginx:1.27-alpinee")
    team.sync()
    Doctor(sandbox).finding("ImagePullBackOff", namespace="shop", kind="deployment", name="web")


def test_a_fix_that_fails_validation_is_reverted_and_the_next_one_heals(
    team: Team, sandbox: Sandbox
) -> None:
    history(team, sandbox)

    result = team.heal("web", on_node=crash_once_planned(team, sandbox))

    assert result.outcome == "fixed", result.summary
    first, second = result.attempts
    assert first["fix"] == "set image of container web to nginx:1.27"
    assert first["verdict"] == "failed"
    assert any("restarted" in line for line in first["evidence"]), first["evidence"]
    assert first["undone"].startswith("reverted PR #1 by PR #2")
    assert second["fix"] == "set image of container web to nginx:1.26"
    assert second["verdict"] == "held"
    assert team.image() == "nginx:1.26"
    assert result.nodes.count("rollback") == 1

    # The same failure again: memory ranks the fix that failed below the one that held.
    breaks(team, sandbox)
    again = team.heal("web")
    assert again.outcome == "fixed", again.summary
    assert [a["fix"] for a in again.attempts] == ["set image of container web to nginx:1.26"]
    ranked = [(r["fix"]["title"], r["reason"]) for r in again.state["fixes"]]
    assert ranked[0][0] == "set image of container web to nginx:1.26"
    assert "held 1 time(s) before for this fingerprint" in ranked[0][1]
    assert ranked[1][0] == "set image of container web to nginx:1.27"
    assert "failed 1 time(s) before for this fingerprint (-0.5)" in ranked[1][1]
