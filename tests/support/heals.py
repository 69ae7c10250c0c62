"""The heal scenes the loop's deterministic tests and their model-planned twins both run
(tests/agents/runtime/loop, tests/agents/runtime/model_loop): web broken in the team's GitOps
repository, healed by the loop, and every check of the outcome, so the same checks hold
whichever planner learned.

An image typo merged and synced (`TYPO`, `break_web`) is healed by a merged PR and validated.
A fix that fails validation (`history`: nginx:1.26, then 1.27, then a typo; `crash_once_planned`
makes 1.27 crash once its fix is planned) is reverted and the next one heals.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio

from agents.runtime.loop.ranking import past_outcomes
from agents.runtime.memory import fingerprint
from agents.runtime.persistence import open_durable
from mcp_servers.gitops.providers.local import LocalProvider
from mcp_servers.gitops.repo import Repository
from mcp_servers.gitops.settings import CREW_AUTHOR
from sandbox.server import Sandbox
from tests.support.diagnosis import Doctor
from tests.support.team import WEB, Team
from tests.support.waiting import eventually

TYPO = "nginx:1.27-alpinee"
PULL_FAILING = {"ErrImagePull", "ImagePullBackOff"}  # a pull failing, early or backed off


def break_web(team: Team, sandbox: Sandbox) -> None:
    team.commit("web: move to alpine", TYPO)
    team.sync()
    Doctor(sandbox).finding("ImagePullBackOff", namespace="shop", kind="deployment", name="web")


def an_image_typo_synced_from_git_is_healed_by_a_merged_pr_and_validated(
    team: Team, sandbox: Sandbox
) -> None:
    """The scene of tests/agents/runtime/loop/test_image_typo_heals_itself.py, whoever plans."""
    break_web(team, sandbox)

    result = team.heal("web")

    assert result.outcome == "fixed", result.summary
    assert result.nodes == ["learn", "recommend", "plan", "decide", "mutate", "validate", "done"]
    [attempt] = result.attempts
    assert attempt["fix"] == "set image of container web to nginx:1.27"
    assert attempt["verdict"] == "held"
    assert "every pod Ready and unrestarted for 20 s of cluster time" in attempt["evidence"]
    assert "diagnose no longer finds ImagePullBackOff" in attempt["evidence"]
    assert "ranked by confidence 0.75" in result.summary
    assert team.image() == "nginx:1.27"

    # The PR: merged, changing exactly the image line of the manifest, comments kept.
    repo = Repository(team.repo, author_name="test", author_email="test@shop")
    provider = LocalProvider(repo, team.repo.parent / "prs")
    [pr] = provider.list_prs(state="all")
    assert pr.state == "merged" and pr.labels == ["kubecrew-heal"]
    # the gitops server's own identity reviews; the body says which agent merged and why
    assert pr.reviews[0].author == CREW_AUTHOR and "policy approved" in pr.reviews[0].body
    assert "by the dev_team agent" in pr.reviews[0].body
    head = repo.read("main", WEB)
    assert "image: nginx:1.27" in head and TYPO not in head, head
    # The sync: the live object carries the repository's label and the healed image.
    assert attempt["applied"] is not None
    assert any(note.startswith("synced ") for note in attempt["applied"]["notes"])

    # The audit: the policy store's proposal, evaluation and decision for the PR.
    records = team.audit()
    proposal = attempt["applied"]["proposal"]
    mine = [r for r in records if r.subject == proposal]
    assert {r.kind for r in mine} >= {"proposal", "decision"}
    assert any("via a pull request" in r.summary for r in mine)

    # The memory: the fix held for this fingerprint.
    async def remembered() -> list[str]:
        async with open_durable(team.home) as durable:
            past = await past_outcomes(
                durable.store,
                "dev_team",
                fingerprint("ImagePullBackOff", "Deployment", "shop", "web"),
            )
            return [f"{p.fix}: {p.outcome}" for p in past]

    assert anyio.run(remembered) == ["set image of container web to nginx:1.27: fixed"]

    again = team.heal("web")  # healthy now: nothing to do, nothing changed
    assert again.outcome == "healthy" and again.nodes == ["learn", "done"]
    assert len(provider.list_prs(state="all")) == 1


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


def a_fix_that_fails_validation_is_reverted_and_the_next_one_heals(
    team: Team, sandbox: Sandbox
) -> None:
    """The scene of tests/agents/runtime/loop/test_failed_fix_rolls_back.py, whoever plans."""
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
