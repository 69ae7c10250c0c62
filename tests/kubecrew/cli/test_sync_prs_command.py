"""`kubecrew approvals sync-prs`, the installed command in a subprocess, on the local forge."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from mcp_servers.gitops.providers.base import Provider
from tests.support.pr_channel import Policy, crew_pr

KUBECREW = str(Path(sys.executable).parent / "kubecrew")
POLICIES = Path(__file__).parents[3] / "policies"  # the shipped ones: shop-admins own the shop


def sync_prs(repo: Path, policy: Policy, *extra: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("KUBECREW_")}
    return subprocess.run(
        [
            KUBECREW, "approvals", "sync-prs", "--repo", str(repo),
            "--state-dir", str(repo.parent / "state"),
            "--people", str(policy.people_file), "--store", str(policy.store.path), *extra,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**environ, "KUBECREW_HOME": str(repo.parent / "home")},
    )  # fmt: skip


def reviewed(manifests: Path, policy: Policy) -> tuple[Provider, int]:
    provider, number = crew_pr(manifests, policy.request.id)
    provider.review(number, author="mallory-gh", verdict="approve", body="")
    provider.review(number, author="alice-gh", verdict="approve", body="")
    return provider, number


def test_sync_prs_prints_what_it_applied_and_then_nothing(manifests: Path, policy: Policy) -> None:
    provider, number = reviewed(manifests, policy)
    first = sync_prs(manifests, policy)
    assert first.returncode == 0, first.stderr
    request = policy.request.id
    assert [line.split(": ")[:2] for line in first.stdout.splitlines()] == [
        [f"PR #{number} {request}", "unknown-reviewer (review by mallory-gh)"],
        [f"PR #{number} {request}", "answered (review by alice-gh)"],
        [f"PR #{number} {request}", "ended"],
    ]
    assert policy.now().state == "granted"
    assert (policy.store.path.parent / "store.pr-reviews.sqlite").is_file()

    again = sync_prs(manifests, policy)
    assert (again.returncode, again.stdout) == (0, "")
    assert len(provider.get(number).pr.comments) == 2


def test_sync_prs_fails_in_one_line_on_a_missing_people_file(
    manifests: Path, policy: Policy
) -> None:
    failed = sync_prs(manifests, policy, "--people", str(manifests.parent / "nobody.yaml"))
    assert failed.returncode == 1 and "Traceback" not in failed.stderr
    assert "no people file at" in failed.stderr
    bad_watch = sync_prs(manifests, policy, "--watch", "0")
    assert bad_watch.returncode == 1 and "--watch takes a positive" in bad_watch.stderr


def test_watch_applies_a_review_made_while_it_runs_and_stops_on_ctrl_c(
    manifests: Path, policy: Policy
) -> None:
    provider, number = crew_pr(manifests, policy.request.id)
    environ = {k: v for k, v in os.environ.items() if not k.startswith("KUBECREW_")}
    watcher = subprocess.Popen(
        [
            KUBECREW, "approvals", "sync-prs", "--repo", str(manifests),
            "--state-dir", str(manifests.parent / "state"), "--people", str(policy.people_file),
            "--store", str(policy.store.path), "--watch", "0.2",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**environ, "KUBECREW_HOME": str(manifests.parent / "home")},
    )  # fmt: skip
    try:
        provider.review(number, author="alice-gh", verdict="request_changes", body="not now")
        assert watcher.stdout is not None
        lines = [watcher.stdout.readline(), watcher.stdout.readline()]
    finally:
        watcher.send_signal(signal.SIGINT)
        _, err = watcher.communicate(timeout=30)
    assert [line.split(": ")[1] for line in lines] == ["answered (review by alice-gh)", "ended"]
    assert watcher.returncode == 0, err
    assert policy.now().state == "denied"


def test_one_pass_with_an_approval_and_an_amendment_grants_nothing_old(
    manifests: Path, policy: Policy
) -> None:
    """alice approves the PR and asks for 2 replicas before the crew has synced: the approval
    saw the old content, so the amendment supersedes the request and the review answers
    nothing; the PR waits for a review of what it now changes."""
    provider, number = crew_pr(manifests, policy.request.id)
    provider.review(number, author="alice-gh", verdict="approve", body="")
    provider.comment(number, author="alice-gh", body="@kubecrew use 2 replicas instead")
    # Forges keep review times to the second: the amendment's request must open in a later one
    # for the review to be seen as older (a start-up of well under a second reached it at once).
    time.sleep(1.05 - time.time() % 1)

    done = sync_prs(manifests, policy, "--policies", str(POLICIES))
    assert done.returncode == 0, done.stderr
    assert [line.split(": ")[1] for line in done.stdout.splitlines()[:2]] == [
        "amended", "stale (review by alice-gh)",
    ]  # fmt: skip
    assert policy.now().state == "denied"  # superseded, never granted
    (pending,) = policy.store.approvals(state="pending")
    assert pending.action.describe() == "scale Deployment shop/web 5 -> 2 replicas directly"


def test_a_comment_after_the_grant_leaves_the_approved_pr_alone(
    manifests: Path, policy: Policy
) -> None:
    provider, number = crew_pr(manifests, policy.request.id)
    provider.review(number, author="alice-gh", verdict="approve", body="")
    assert sync_prs(manifests, policy).returncode == 0
    assert policy.now().state == "granted"
    head = provider.get(number).pr.head_commit

    provider.comment(number, author="alice-gh", body="@kubecrew use 2 replicas instead")
    later = sync_prs(manifests, policy, "--policies", str(POLICIES))
    assert later.returncode == 0, later.stderr
    assert "approved-already" in later.stdout, later.stdout
    pr = provider.get(number).pr
    assert pr.head_commit == head and policy.now().state == "granted"
    assert policy.store.approvals(state="pending") == []
    assert f"approval request {policy.request.id} was granted for scale Deployment shop/web " in (
        pr.comments[-1].body
    )
