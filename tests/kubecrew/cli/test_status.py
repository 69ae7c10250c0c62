"""`kubecrew status` as a script reads it (`--json`) and as a person does: agents, the request
waiting for a person, no incidents recorded, no open PRs in a fresh repository, and a decision
once the request is answered."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import git

from core.policy import approvals
from core.policy.proposals import Identity
from core.policy.store.sqlite import SqliteStore
from tests.support.policies import escalated

KUBECREW = str(Path(sys.executable).parent / "kubecrew")


def status(home: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBECREW_")}
    env["KUBECREW_HOME"] = str(home)
    return subprocess.run(
        [KUBECREW, "status", *arguments], capture_output=True, text=True, env=env, timeout=60
    )


def test_status_shows_agents_waiting_requests_and_decisions(tmp_path: Path) -> None:
    store_path = tmp_path / "store.sqlite"
    repo = tmp_path / "deploy"
    git.Repo.init(repo)
    empty = status(tmp_path / "home", "--store", str(store_path), "--json")
    assert empty.returncode == 0, empty.stderr
    assert not store_path.exists()  # status reads; it never creates a store
    request = escalated(store_path)

    shown = status(tmp_path / "home", "--store", str(store_path), "--repo", str(repo), "--json")
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert {a["name"]: a["brain"] for a in data["agents"]}["dev_team"] == "deterministic"
    assert [a["id"] for a in data["approvals"]] == [request.id]
    assert data["incidents"] == [] and data["pull_requests"] == []
    (decision,) = data["decisions"]
    assert (
        decision["decision"].startswith("escalated:") and decision["proposal"] == request.proposal
    )

    store = SqliteStore(store_path)
    try:
        alice = Identity(kind="person", name="alice", groups=("shop-admins",))
        approvals.answer(store, request.id, alice, "deny", via="cli", now=datetime.now(UTC))
    finally:
        store.close()
    text = status(tmp_path / "home", "--store", str(store_path))
    assert text.returncode == 0, text.stderr
    assert "Pending approvals (0)" in text.stdout and "none recorded" in text.stdout
    assert f"{request.proposal}: rejected" in text.stdout
