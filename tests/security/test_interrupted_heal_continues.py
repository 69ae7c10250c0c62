"""Finding 8: a heal killed between the merge and the sync was stuck.

Git had the fix and the cluster did not; a plain rerun started a new heal, which failed "the
change leaves every file as it was; nothing to propose" and left another approved proposal
behind, and `kubecrew status` did not show the interrupted heal. Now a heal is booked in the
incident book from its start: status lists the killed one as interrupted, and a plain rerun of
the same target (no --thread) continues it: one proposal, one merge, one sync, the image healed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sandbox.server import Sandbox
from tests.support.crashes import calls, run_child
from tests.support.heals import break_web
from tests.support.kubectl import Kubectl
from tests.support.mcp_hosts import KUBECREW
from tests.support.team import Team, make_team, proposals, prs


@pytest.fixture
def team(sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path) -> Team:
    return make_team(sandbox, kubectl, tmp_path)


def status(home: Path, store: Path) -> dict[str, Any]:
    done = subprocess.run(
        [KUBECREW, "status", "--json", "--store", str(store)],
        capture_output=True, text=True, timeout=60, env=os.environ | {"KUBECREW_HOME": str(home)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def test_a_heal_killed_before_its_sync_is_listed_and_continued_by_a_plain_rerun(
    team: Team, sandbox: Sandbox, tmp_path: Path
) -> None:
    break_web(team, sandbox)
    home = tmp_path / "kubecrew-home"
    book = home / "agents" / "incidents.sqlite"
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"

    killed = run_child(team, tmp_path, first, kill_at="sync", book=book)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert [c["tool"] for c in calls(first)].count("merge_pr") == 1

    [incident] = status(home, team.store)["incidents"]
    assert incident["state"] == "handling", incident
    assert incident["heal"].startswith("interrupted (thread "), incident
    assert "`kubecrew heal web -n shop` continues it" in incident["heal"]

    rerun = run_child(team, tmp_path, second, book=book)
    assert rerun.returncode == 0, rerun.stderr
    assert json.loads(rerun.stdout)["outcome"] == "fixed", rerun.stdout
    sent = calls(first) + calls(second)
    assert [c["tool"] for c in sent].count("propose") == 1 and proposals(team) == 1
    assert [c["tool"] for c in sent].count("merge_pr") == 1
    assert sum(1 for c in sent if c["tool"] == "sync" and not c["arguments"].get("dry_run")) == 1
    [pr] = prs(team)
    assert pr.state == "merged"
    assert team.image() == "nginx:1.27"
    assert all("heal" not in i for i in status(home, team.store)["incidents"])
