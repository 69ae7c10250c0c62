"""`kubecrew approvals`: the issue's inverse case answered from a terminal.

The Cluster Operator refuses the Dev Team's counter, so the proposal is escalated to the shop's
admins. `kubecrew approvals list` shows the request, someone outside shop-admins is refused,
an admin grants it while `kubecrew approvals wait` blocks on it, and the proposal ends approved.
Everything runs the installed `kubecrew` in subprocesses against one SQLite file under
$KUBECREW_HOME; the negotiation uses the wall clock, as an agent would, so expiry is real.
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.policy.negotiation import negotiate
from core.policy.proposals import ApprovalRequest
from core.policy.store.sqlite import SqliteStore
from tests.support.policies import defaults, downscale

KUBECREW = str(Path(sys.executable).parent / "kubecrew")


def escalated(home: Path) -> ApprovalRequest:
    now = datetime.now(UTC)
    store = SqliteStore(home / "policy" / "store.sqlite")  # where $KUBECREW_HOME puts it
    proposal = downscale(created=now, counters="refuse")
    store.propose(proposal)
    negotiate(store, defaults(), proposal.id, now=now)
    (request,) = [r for r in store.approvals() if r.proposal == proposal.id]
    store.close()
    return request


def environ(home: Path, **extra: str) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("KUBECREW_")}
    return {**clean, "KUBECREW_HOME": str(home), **extra}


def kubecrew(*args: str, home: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KUBECREW, *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=environ(home, **extra),
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path


def test_an_admin_grants_the_escalated_downscale_while_a_waiter_blocks(home: Path) -> None:
    request = escalated(home)
    listed = kubecrew("approvals", "list", "--state", "pending", home=home)
    assert listed.returncode == 0, listed.stderr
    line = listed.stdout.strip()
    assert line.startswith(f"{request.id}  pending  until ")
    assert line.endswith(
        "group shop-admins, agent platform: scale Deployment shop/web 5 -> 1 replicas directly "
        f"(proposal {request.proposal})"
    )

    refused = kubecrew(
        "approvals", "grant", request.id, "--as", "mallory", "--group", "developers", home=home
    )
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert f"person mallory may not answer {request.id}: it needs group shop-admins" in (
        " ".join(refused.stderr.split())
    )

    waiter = subprocess.Popen(
        [KUBECREW, "approvals", "wait", request.id, "--timeout", "50"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environ(home),
    )
    granted = kubecrew(
        "approvals",
        "grant",
        request.id,
        "--reason",
        "the sale is over",
        "--as",
        "alice",
        "--group",
        "shop-admins",
        home=home,
    )
    assert granted.returncode == 0, granted.stderr
    assert granted.stdout.splitlines() == [
        f"{request.id}: grant by person alice recorded; the request is granted",
        f"proposal {request.proposal}: approved: scale Deployment shop/web 5 -> 1 replicas "
        "directly after 1 round(s)",
    ]
    out, err = waiter.communicate(timeout=55)
    assert waiter.returncode == 0, err
    assert f"approval {request.id} (granted) for proposal {request.proposal}" in out
    assert "person alice granted via cli: the sale is over" in out
    assert f"proposal {request.proposal}: approved: " in out

    again = kubecrew("approvals", "wait", request.id, "--timeout", "1", home=home)
    assert again.returncode == 1 and "was already taken up by kubecrew approvals wait" in (
        " ".join(again.stderr.split())
    )
    shown = kubecrew("proposals", "show", request.proposal, home=home)
    assert shown.returncode == 0, shown.stderr
    assert f"granted by person alice via cli: the sale is over on {request.id} (granted)" in (
        shown.stdout
    )
    assert f"approval {request.id} (granted) for proposal {request.proposal}" in shown.stdout
    assert "  approvers group shop-admins, agent platform (1 needed)" in shown.stdout
    audited = kubecrew("audit", "list", "--subject", request.id, home=home)
    assert [line.split()[3] for line in audited.stdout.splitlines()] == ["approval", "answer"]
    assert kubecrew("audit", "verify", home=home).returncode == 0


def test_a_deny_from_the_groups_in_the_environment_ends_the_wait_with_1(home: Path) -> None:
    request = escalated(home)
    denied = kubecrew(
        "approvals",
        "deny",
        request.id,
        "--reason",
        "not before the sale",
        home=home,
        KUBECREW_USER="bob",
        KUBECREW_GROUPS="developers, shop-admins",
    )
    assert denied.returncode == 0, denied.stderr
    assert denied.stdout.splitlines()[0] == (
        f"{request.id}: deny by person bob recorded; the request is denied"
    )
    waited = kubecrew("approvals", "wait", request.id, "--timeout", "5", home=home)
    assert waited.returncode == 1
    assert f"proposal {request.proposal}: rejected: " in waited.stdout
    shown = kubecrew("approvals", "show", request.id, home=home)
    assert (
        shown.returncode == 0 and "person bob denied via cli: not before the sale" in shown.stdout
    )


def test_a_wait_on_an_unanswered_request_times_out_with_2(home: Path) -> None:
    request = escalated(home)
    waited = kubecrew("approvals", "wait", request.id, "--timeout", "0.5", home=home)
    assert waited.returncode == 2
    assert f"{request.id} is still pending after 0.5s" in waited.stderr
    missing = kubecrew("approvals", "show", "a-missing", home=home)
    assert missing.returncode == 1 and "`kubecrew approvals list` shows them" in missing.stderr


def test_an_answer_without_an_identity_says_how_to_give_one(home: Path) -> None:
    request = escalated(home)
    refused = kubecrew("approvals", "grant", request.id, "--reason", "checked", home=home)
    said = " ".join(refused.stderr.split())
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert f"may not answer {request.id}: it needs group shop-admins" in said
    assert "say who you are with --as NAME --group GROUP" in said
