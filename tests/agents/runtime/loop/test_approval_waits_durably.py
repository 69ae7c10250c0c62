"""When policy asks a person, the loop proposes, stops durably and says who may answer; the run
picks up (a new process, a resume, `kubecrew heal --thread`) only once the request has ended,
claims its end from the policy store exactly once, and applies with that proposal (granted) or
escalates with the person's reason (denied) or the expiry.

The team's own ChangePolicy here sends every pull-request change of web to shop-admins; alice
of shop-admins answers through the policy server's `answer_approval`, as from any MCP host.
"""

from __future__ import annotations

import os
import re
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.memory import create_connected_server_and_client_session

from core.policy.settings import SHIPPED, PolicySettings
from core.policy.store import open_store
from mcp_servers.policy.server import build as build_policy
from sandbox.server import Sandbox
from tests.support.heals import TYPO, break_web
from tests.support.kubectl import Kubectl
from tests.support.mcp_hosts import KUBECREW
from tests.support.team import WEB_REVIEWS, Team, make_team, proposals, prs

WAITED = ["learn", "recommend", "plan", "decide"]  # then the approval node interrupts


@pytest.fixture
def guarded(sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path) -> Team:
    mine = tmp_path / "team-policies"
    mine.mkdir()
    (mine / "web-reviews.yaml").write_text(WEB_REVIEWS)
    return make_team(sandbox, kubectl, tmp_path, (SHIPPED, mine))


def alice(team: Team, tool: str, **arguments: Any) -> dict[str, Any]:
    """alice of shop-admins, calling the policy server over MCP."""
    assert team.servers.policy is not None
    settings = PolicySettings(
        policies=team.servers.policy.policies,
        store=str(team.store),
        person="alice",
        groups=("shop-admins",),
    )

    async def go() -> dict[str, Any]:
        async with create_connected_server_and_client_session(build_policy(settings)) as client:
            done = await client.call_tool(tool, arguments)
            assert not done.isError, done.content
            return dict(done.structuredContent or {})

    return anyio.run(go)


def test_a_granted_request_is_claimed_once_and_applied_with_its_proposal(
    guarded: Team, sandbox: Sandbox
) -> None:
    break_web(guarded, sandbox)

    waiting = guarded.heal("web", thread="approve-web")
    assert not waiting.finished and waiting.outcome == ""
    assert waiting.nodes == WAITED
    assert waiting.waiting_for.startswith("a-")
    assert "group shop-admins answer " + waiting.waiting_for in waiting.asked
    assert prs(guarded) == [] and guarded.image() == TYPO

    # Run again before anyone answered: it looks, and waits on the same request; nothing new.
    again = guarded.heal("web", thread="approve-web")
    assert again.waiting_for == waiting.waiting_for and again.nodes == []
    assert proposals(guarded) == 1

    granted = alice(guarded, "answer_approval", request_id=waiting.waiting_for, verdict="grant")
    assert granted["state"] == "granted"

    healed = guarded.heal("web", thread="approve-web", resume="answered")
    assert healed.outcome == "fixed", healed.summary
    assert healed.nodes == ["approval", "mutate", "validate", "done"]
    assert guarded.image() == "nginx:1.27"
    [pr] = prs(guarded)
    proposal = waiting.state["pending"]["proposal"]
    assert pr.state == "merged" and f"proposal {proposal}" in pr.reviews[0].body
    [attempt] = healed.attempts
    assert attempt["applied"] is not None and attempt["applied"]["proposal"] == proposal
    shown = alice(guarded, "list_approvals", state="all")
    [request] = shown["approvals"]
    assert request["state"] == "granted"
    store = open_store(str(guarded.store))
    try:
        assert store.approval(waiting.waiting_for).claimed_by == "agent dev_team approve-web"
    finally:
        store.close()

    # A second resume finds the run finished: nothing runs, nothing changes.
    twice = guarded.heal("web", thread="approve-web", resume="answered")
    assert twice.nodes == [] and twice.outcome == "fixed"
    assert len(prs(guarded)) == 1 and proposals(guarded) == 1


def end_by_denial(team: Team, request: str) -> str:
    alice(team, "answer_approval", request_id=request, verdict="deny", reason="not during the sale")
    return "denied by person alice via mcp: not during the sale"


def end_by_expiry(team: Team, request: str) -> str:
    store = open_store(str(team.store))
    try:  # the request's hour, passed: what a later look at the store sees
        [ended] = store.expire(now=datetime.now(UTC) + timedelta(hours=2))
    finally:
        store.close()
    assert ended.id == request
    return f"approval expired: {request} was not answered by"


@pytest.mark.parametrize("end", [end_by_denial, end_by_expiry], ids=["denied", "expired"])
def test_a_request_that_ends_without_a_grant_escalates_with_the_reason(
    guarded: Team, sandbox: Sandbox, end: Any
) -> None:
    break_web(guarded, sandbox)
    waiting = guarded.heal("web", thread="refused-web")
    assert waiting.nodes == WAITED

    reason = end(guarded, waiting.waiting_for)

    ended = guarded.heal("web", thread="refused-web")
    assert ended.outcome == "escalated", ended.summary
    assert ended.nodes == ["approval", "escalate"]
    [attempt] = ended.attempts
    assert attempt["verdict"] == "refused"
    assert any(reason in line for line in attempt["evidence"]), attempt["evidence"]
    assert reason in ended.summary and "A person needs to decide" in ended.summary
    assert prs(guarded) == [] and guarded.image() == TYPO


def test_kubecrew_heal_exits_3_naming_who_answers_and_resumes_by_thread(
    guarded: Team, sandbox: Sandbox, tmp_path: Path
) -> None:
    break_web(guarded, sandbox)
    assert guarded.servers.policy is not None
    options = ["-n", "shop", "--kubeconfig", str(sandbox.kubeconfig), "--repo", str(guarded.repo)]
    for policies in guarded.servers.policy.policies:
        options += ["--policies", str(policies)]
    options += ["--policy-store", str(guarded.store)]
    env = {**os.environ, "KUBECREW_HOME": str(tmp_path / "home"), "KUBECREW_MODEL_GUARD": "1"}
    env.pop("KUBECREW_MODEL", None)

    def heal(*extra: str) -> subprocess.CompletedProcess[str]:
        command = [KUBECREW, "heal", "web", *options, *extra]
        return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)

    waiting = heal()
    assert waiting.returncode == 3, waiting.stderr
    found = re.search(
        r"waiting for approval (a-[0-9a-f]+): a person decides: group shop-admins", waiting.stdout
    )
    assert found, waiting.stdout
    thread = re.search(r"--thread (\S+)", waiting.stdout)
    assert thread, waiting.stdout

    alice(guarded, "answer_approval", request_id=found.group(1), verdict="grant")

    healed = heal("--thread", thread.group(1))
    assert healed.returncode == 0, healed.stdout + healed.stderr
    assert healed.stdout.startswith("Healed Deployment web in shop:"), healed.stdout
    assert guarded.image() == "nginx:1.27"
