"""A heal run in a process of its own killed by SIGKILL at one tool call, then run again on its
thread (tests/support/crashing_heal.py is the child): `crash_and_resume` kills a run at
`kill_at` and resumes it, and checks exactly one of each mutation happened; `calls` reads the
calls a child logged before sending them, and `deliver` plays the killed process's last call to
the policy server, as the network would have.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp.shared.memory import create_connected_server_and_client_session

from mcp_servers.policy.server import build as build_policy
from sandbox.server import Sandbox
from tests.support.heals import break_web
from tests.support.team import Team, proposals, prs

ROOT = Path(__file__).resolve().parents[2]  # the checkout: `python -m tests...` runs from it
Call = dict[str, Any]


def run_child(
    team: Team, tmp_path: Path, log: Path, kill_at: str = "", *, book: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """The child heal: on the thread "crash-web", or booked in `book` as `kubecrew heal` is."""
    assert team.servers.gitops is not None and team.servers.policy is not None
    spec = {
        "kubeconfig": str(team.sandbox.kubeconfig),
        "repo": str(team.repo),
        "prs": str(team.servers.gitops.state_dir),
        "store": str(team.store),
        "policies": [str(p) for p in team.servers.policy.policies],
        "home": str(team.home),
        "thread": None if book else "crash-web",
        "book": str(book) if book else None,
        "kill_at": kill_at,
        "log": str(log),
    }
    command = [sys.executable, "-m", "tests.support.crashing_heal", json.dumps(spec)]
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
