"""A heal process killed by SIGKILL in the middle of a mutation, then run again on its thread,
finishes that mutation: one proposal, one PR, one merge, one sync, and the image healed.

The child (`crashing_heal`) dies at a tool call before the call is sent. Here: before the PR
exists, once with the policy decision checkpointed, and once in the hardest window, a proposal
the store recorded whose id never reached the checkpoint, played by delivering the killed
process's `propose` call to the policy server ourselves, as the network would have: the
resumed run must find it by its key. `test_crash_around_the_merge_resumes_once` kills it after
the PR was opened (before the merge) and after the merge (before the sync).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.memory import create_connected_server_and_client_session

from mcp_servers.policy.server import build as build_policy
from sandbox.server import Sandbox
from tests.agents.loop.conftest import Team
from tests.agents.loop.test_approval_waits_durably import proposals, prs
from tests.agents.loop.test_image_typo_heals_itself import break_web

ROOT = Path(__file__).resolve().parents[3]
Call = dict[str, Any]


def run_child(
    team: Team, tmp_path: Path, log: Path, kill_at: str = ""
) -> subprocess.CompletedProcess[str]:
    assert team.servers.gitops is not None and team.servers.policy is not None
    spec = {
        "kubeconfig": str(team.sandbox.kubeconfig),
        "repo": str(team.repo),
        "prs": str(team.servers.gitops.state_dir),
        "store": str(team.store),
        "policies": [str(p) for p in team.servers.policy.policies],
        "home": str(team.home),
        "thread": "crash-web",
        "kill_at": kill_at,
        "log": str(log),
    }
    command = [sys.executable, "-m", "tests.agents.loop.crashing_heal", json.dumps(spec)]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120)


def calls(log: Path) -> list[Call]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def deliver(team: Team, call: Call) -> None:
    """The killed process's last call, as it would have reached the policy server."""
    settings = team.servers.policy
    assert settings is not None

    async def go() -> None:
        server = build_policy(settings)
        async with create_connected_server_and_client_session(server) as client:
            done = await client.call_tool(call["tool"], call["arguments"])
            assert not done.isError, done.content

    anyio.run(go)


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


def crash_and_resume(team: Team, sandbox: Sandbox, tmp_path: Path, kill_at: str) -> None:
    """Kill a heal run at `kill_at`, run it again: exactly one of each mutation happened."""
    break_web(team, sandbox)
    first_log, second_log = tmp_path / "first.jsonl", tmp_path / "second.jsonl"

    killed = run_child(team, tmp_path, first_log, kill_at=kill_at)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    *sent, last = calls(first_log)
    assert last["tool"] == kill_at  # it died there, before the call left the process
    if kill_at == "propose":
        deliver(team, last)
        sent.append(last)

    resumed = run_child(team, tmp_path, second_log)
    assert resumed.returncode == 0, resumed.stderr
    outcome = json.loads(resumed.stdout)
    assert outcome["outcome"] == "fixed", outcome["summary"]
    sent += calls(second_log)

    def count(tool: str, **arguments: Any) -> int:
        return sum(
            1
            for c in sent
            if c["tool"] == tool and all(c["arguments"].get(k) == v for k, v in arguments.items())
        )

    assert count("propose") == 1 and proposals(team) == 1
    assert count("propose_change") == 1 and count("merge_pr") == 1
    assert count("sync", dry_run=False) == 1
    [pr] = prs(team)
    assert pr.state == "merged" and len(pr.reviews) == 1
    assert team.image() == "nginx:1.27"
