"""A review on a crew PR that carries an approval request answers it: local PR provider.

The PR is opened by the gitops server's own `propose_change` (over MCP, with `approval=`), the
reviews are the local forge's, and the answer lands in a real SQLite policy store.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.policy.approvals import answer
from core.policy.proposals import Identity
from mcp_servers.gitops.approval_links import mark
from mcp_servers.gitops.providers import provider_for
from mcp_servers.gitops.repo import Repository
from mcp_servers.gitops.server import build
from tests.support.gitops import Call, session, settings_for
from tests.support.pr_channel import WEB, Policy, crew_pr, synced


def test_an_approvers_review_approves_the_proposal_exactly_once(
    manifests: Path, policy: Policy
) -> None:
    provider, number = crew_pr(manifests, policy.request.id)
    body = provider.get(number).pr.body
    assert body.startswith("web has used under 10% CPU for an hour.\n\nThis change waits for")
    assert body.endswith(f"\nkubecrew-approval: {policy.request.id}")

    provider.review(number, author="alice-gh", verdict="approve", body="the sale is over")
    assert [r.id for r in provider.get(number).pr.reviews] == ["1"]  # what the ledger keys on
    first = synced(provider, policy)
    assert [(o.kind, o.reviewer) for o in first] == [("answered", "alice-gh"), ("ended", "")]

    decision = policy.store.get(policy.request.proposal).decision
    assert decision is not None and decision.outcome == "approved"
    assert decision.decided_by == Identity(kind="person", name="alice", groups=("shop-admins",))
    (given,) = policy.now().answers
    assert (given.via, given.verdict, given.reason) == (
        "pull-request",
        "grant",
        f"approved pull request #{number}: the sale is over",
    )
    (comment,) = provider.get(number).pr.comments
    assert comment.author == "kubecrew"
    assert comment.body.startswith(
        f"Approval request {policy.request.id} is granted (granted by person alice via "
        f"pull-request: approved pull request #{number}: the sale is over). "
        f"Proposal {policy.request.proposal}: approved: scale Deployment shop/web"
    )

    assert synced(provider, policy) == []  # a restart applies nothing twice
    assert len(provider.get(number).pr.comments) == 1
    assert len(policy.now().answers) == 1


def test_changes_requested_denies_the_request(manifests: Path, policy: Policy) -> None:
    provider, number = crew_pr(manifests, policy.request.id)
    provider.review(number, author="alice-gh", verdict="request_changes", body="not this week")
    outcomes = synced(provider, policy)
    assert [o.kind for o in outcomes] == ["answered", "ended"]
    assert policy.now().state == "denied"
    decision = policy.store.get(policy.request.proposal).decision
    assert decision is not None and decision.outcome == "rejected"
    (comment,) = provider.get(number).pr.comments
    assert comment.body.startswith(
        f"Approval request {policy.request.id} is denied (denied by person alice via "
        f"pull-request: requested changes on pull request #{number}: not this week). "
        f"Proposal {policy.request.proposal}: rejected: "
    )


def test_strangers_and_non_approvers_are_told_who_may_answer_once(
    manifests: Path, policy: Policy
) -> None:
    provider, number = crew_pr(manifests, policy.request.id)
    provider.review(number, author="mallory-gh", verdict="approve", body="")
    provider.review(number, author="bob-gh", verdict="approve", body="lgtm")
    provider.review(number, author="carol-gh", verdict="comment", body="a question")
    outcomes = synced(provider, policy)
    assert [(o.kind, o.reviewer) for o in outcomes] == [
        ("unknown-reviewer", "mallory-gh"),
        ("not-authorised", "bob-gh"),
    ]
    stranger, developer = (c.body for c in provider.get(number).pr.comments)
    assert stranger.startswith(
        f"@mallory-gh: your review was not counted for approval request "
        f"{policy.request.id}: this login is not in kubecrew's people file"
    )
    assert "The request needs group shop-admins (the Platform agent may also settle" in stranger
    assert developer == (
        f"@bob-gh: your review was not counted: person bob may not answer {policy.request.id}. "
        "It needs group shop-admins: ask one of them to review this pull request; the Platform "
        "agent may also settle it under org policy."
    )
    assert policy.now().state == "pending" and policy.now().answers == []

    assert synced(provider, policy) == []
    assert len(provider.get(number).pr.comments) == 2


def test_a_marker_in_a_pr_the_crew_did_not_open_is_ignored(manifests: Path, policy: Policy) -> None:
    provider, _ = crew_pr(manifests, policy.request.id)
    repo = Repository(manifests, author_name="m", author_email="m@x")
    repo.commit(branch="mallory/tweak", start="main", files={"README": "hi\n"}, message="tweak\n")
    forged = provider.open(
        title="Harmless tweak",
        body=mark("Nothing to see.", policy.request.id),
        labels=[],
        head="mallory/tweak",
        base="main",
        author="mallory",
    )
    provider.review(forged.number, author="alice-gh", verdict="approve", body="sure")
    assert synced(provider, policy) == []
    assert policy.now().state == "pending"
    assert provider.get(forged.number).pr.comments == []


def test_a_request_ended_in_another_channel_is_announced_once(
    manifests: Path, policy: Policy
) -> None:
    provider, number = crew_pr(manifests, policy.request.id)
    alice = policy.people.by_account("github", "alice-gh")
    assert alice is not None
    answer(
        policy.store,
        policy.request.id,
        alice,
        "grant",
        via="slack",
        now=policy.request.requested_at,
    )
    (ended,) = synced(provider, policy)
    assert ended.kind == "ended" and "granted by person alice via slack" in ended.detail

    provider.review(number, author="alice-gh", verdict="request_changes", body="wait")
    (late,) = synced(provider, policy)
    assert (late.kind, late.detail) == ("late", f"{policy.request.id} was already granted")
    assert len(provider.get(number).pr.comments) == 1
    assert policy.now().state == "granted"


def test_a_review_made_just_before_the_merge_still_counts(manifests: Path, policy: Policy) -> None:
    provider, number = crew_pr(manifests, policy.request.id)
    provider.review(number, author="alice-gh", verdict="approve", body="")
    provider.merge(number)
    assert [o.kind for o in synced(provider, policy)] == ["answered", "ended"]
    assert policy.now().state == "granted"
    assert synced(provider, policy) == []


@pytest.mark.parametrize(
    ("body", "approval", "message"),
    [
        ("x\nkubecrew-approval: a-00000000", "", "the body holds a 'kubecrew-approval:' line"),
        ("", "p-12345678", "is not an approval request id"),
    ],
    ids=["marker-in-free-text", "not-a-request-id"],
)
def test_propose_change_refuses_a_marker_it_did_not_write(
    manifests: Path, body: str, approval: str, message: str
) -> None:
    failures: list[str] = []

    async def script(call: Call) -> None:
        try:
            await call(
                "propose_change",
                title="Scale web to 2",
                path=WEB,
                kind="Deployment",
                name="web",
                edits=[{"path": "spec.replicas", "value": 2}],
                body=body,
                approval=approval,
            )
        except AssertionError as exc:
            failures.append(str(exc))

    settings = settings_for(manifests)
    session(build(settings), script)
    assert len(failures) == 1 and message in failures[0]
    repo = Repository(manifests, author_name="k", author_email="k@x")
    assert provider_for(settings, repo).list_prs(state="all") == []
    assert repo.branches() == ["main"]


def test_a_request_this_store_does_not_know_is_reported_once_without_a_comment(
    manifests: Path, policy: Policy
) -> None:
    provider, number = crew_pr(manifests, "a-0badc0de")
    provider.review(number, author="alice-gh", verdict="approve", body="")
    (unknown,) = synced(provider, policy)
    assert (unknown.kind, unknown.request) == ("unknown-request", "a-0badc0de")
    assert synced(provider, policy) == []
    assert provider.get(number).pr.comments == []
    assert policy.now().state == "pending"
