"""A model-planned heal process killed by SIGKILL in the middle of mutate, then run again on
its thread, finishes that mutation once: one proposal, one PR, one merge, one sync, the image
healed; and the model, whose reads were checkpointed with `learn`, is not asked again. Killed
once in the hardest window (a proposal the store recorded whose id never reached the
checkpoint, delivered to the policy server as the network would have) and once with the PR
opened, before its merge. See tests/agents/runtime/loop/test_crash_before_the_pr_resumes_once.py.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sandbox.server import Sandbox
from tests.agents.runtime.model_loop.model_team import ModelTeam
from tests.support.crashes import ROOT, calls, deliver
from tests.support.heals import break_web
from tests.support.team import proposals, prs

MODEL_READS = ["list_resources", "describe", "events", "logs"]


def run_child(team: ModelTeam, log: Path, kill_at: str = "") -> subprocess.CompletedProcess[str]:
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
    child = "tests.agents.runtime.model_loop.crashing_model_heal"
    command = [sys.executable, "-m", child, json.dumps(spec)]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120)


@pytest.mark.parametrize(
    "kill_at",
    [
        pytest.param("propose", id="proposed-but-not-checkpointed"),
        pytest.param("merge_pr", id="pr-opened-before-the-merge"),
    ],
)
def test_a_model_planned_run_killed_in_mutate_resumes_without_a_second_mutation(
    team: ModelTeam, sandbox: Sandbox, tmp_path: Path, kill_at: str
) -> None:
    break_web(team, sandbox)
    first_log, second_log = tmp_path / "first.jsonl", tmp_path / "second.jsonl"

    killed = run_child(team, first_log, kill_at=kill_at)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    *sent, last = calls(first_log)
    assert last["tool"] == kill_at  # it died there, before the call left the process
    read = [c["tool"] for c in sent if c["tool"] in MODEL_READS]
    assert read[-3:] == MODEL_READS[1:], read  # the model planned learn before the kill
    if kill_at == "propose":
        deliver(team, last)
        sent.append(last)

    resumed = run_child(team, second_log)
    assert resumed.returncode == 0, resumed.stderr
    outcome = json.loads(resumed.stdout)
    assert outcome["outcome"] == "fixed", outcome["summary"]
    assert outcome["model_turns"] == 0 and "learn" not in outcome["nodes"]
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
