"""A comment that amends a PR carrying a pending approval request supersedes the request: a new
proposal for the amended action, the PR's marker moved to its request, the old one ended as
superseded, a reply saying so; reviews then answer the new request only. Local forge and
GitHub."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from core.policy.proposals import ApprovalRequest
from kubecrew.channels.pr.approvals import Outcome
from mcp_servers.gitops.approval_links import marked
from mcp_servers.gitops.providers.base import Provider
from mcp_servers.gitops.providers.local import LocalProvider
from tests.support.github import FakeGitHub
from tests.support.pr_channel import WEB, Policy, comments_synced, crew_pr, synced


def amend_to_two(provider: Provider, number: int, repo: Path, policy: Policy) -> ApprovalRequest:
    """alice asks for 2 replicas: below the shop's minimum of 3, and the proposer refuses
    counters, so shop-admins decide again. Returns the new request."""
    provider.comment(number, author="alice-gh", body="@kubecrew use 2 replicas instead")
    (handled,) = comments_synced(provider, repo, policy, crew_author=provider.get(number).pr.author)
    assert handled.kind == "amended", handled.detail
    (new,) = [r for r in policy.store.approvals(state="pending")]
    assert new.id != policy.request.id
    return new


def test_the_amended_pr_carries_a_new_request_and_reviews_answer_it(
    manifests: Path, policy: Policy
) -> None:
    provider, number = crew_pr(manifests, policy.request.id)
    new = amend_to_two(provider, number, manifests, policy)

    assert new.action.describe() == "scale Deployment shop/web 5 -> 2 replicas directly"
    assert new.approvers.describe() == "group shop-admins, agent platform"
    proposal = policy.store.get(new.proposal).proposal
    assert proposal.proposer.name == "cluster-operator"  # the change is still its own
    assert f"supersedes approval request {policy.request.id}" in proposal.rationale
    # The old request is over: ended by its proposer's word, its proposal rejected.
    old = policy.now()
    (withdrawn,) = old.answers
    assert (old.state, withdrawn.by.name, withdrawn.via) == ("denied", "cluster-operator",
                                                             "pull-request")  # fmt: skip
    assert withdrawn.reason == (
        f"superseded by proposal {new.proposal} (approval request {new.id}): pull request "
        f"#{number} was amended (replicas 2)"
    )
    decided = policy.store.get(policy.request.proposal).decision
    assert decided is not None and decided.outcome == "rejected"
    # The PR names the new request, once, and says so.
    pr = provider.get(number).pr
    assert marked(pr, crew_author="kubecrew") == new.id
    assert policy.request.id not in pr.body and pr.body.count("kubecrew-approval:") == 1
    assert pr.body.startswith("web has used under 10% CPU for an hour.\n\nThis change waits")
    reply = pr.comments[-1].body
    assert f"Approval request {policy.request.id} was for scale Deployment shop/web 5 -> 1" in (
        reply
    )
    assert f"approval request {new.id} (proposal {new.proposal}) asks for scale " in reply
    assert (
        "a review by group shop-admins answers it; the Platform agent may also settle it under "
        "org policy." in reply
    )
    (audited,) = policy.store.audit(kind="mutation")
    assert (audited.details["new_proposal"], audited.details["new_approval"]) == (
        new.proposal, new.id,
    )  # fmt: skip

    provider.review(number, author="alice-gh", verdict="approve", body="2 is enough tonight")
    outcomes = synced(provider, policy)
    assert [(o.request, o.kind) for o in outcomes] == [(new.id, "answered"), (new.id, "ended")]
    assert policy.store.approval(new.id).state == "granted"
    assert policy.now().state == "denied"  # the old one stays superseded


def test_a_review_made_before_the_amendment_answers_nothing(
    manifests: Path, policy: Policy
) -> None:
    provider, number = crew_pr(manifests, policy.request.id)
    provider.review(number, author="alice-gh", verdict="approve", body="5 -> 1 is fine")
    # The review was left a minute before the amendment, and read only after it (a sync that
    # ran comments first, or a slow forge): it approved the old content, not this one.
    assert isinstance(provider, LocalProvider)
    record = provider.dir / f"{number}.json"
    stored = json.loads(record.read_text())
    stored["reviews"][0]["at"] = (datetime.now(UTC) - timedelta(minutes=1)).isoformat()
    record.write_text(json.dumps(stored))
    new = amend_to_two(provider, number, manifests, policy)

    outcomes: list[Outcome] = synced(provider, policy)
    assert [(o.request, o.kind, o.reviewer) for o in outcomes] == [(new.id, "stale", "alice-gh")]
    assert policy.store.approval(new.id).state == "pending"
    assert provider.get(number).pr.comments[-1].body == (
        f"@alice-gh: your review was made before approval request {new.id} was opened (this "
        "pull request changed since), so it answers nothing; review the pull request as it is "
        "now."
    )


def test_on_github_the_description_moves_to_the_new_request(
    clone: Path, github: FakeGitHub, policy: Policy
) -> None:
    provider, number = crew_pr(
        clone, policy.request.id, provider="github", github_repo="acme/deploy",
        github_api_url=github.url,
    )  # fmt: skip
    pull = github.pulls[number]
    pull.comments.append(
        {
            "id": 1_900_000_002,
            "user": {"login": "alice-gh"},
            "body": "@kubecrew use 2 replicas instead",
            "created_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
    )
    (handled,) = comments_synced(provider, clone, policy, crew_author="kubecrew-bot")
    assert handled.kind == "amended", handled.detail
    (new,) = policy.store.approvals(state="pending")
    assert pull.body.endswith(f"\nkubecrew-approval: {new.id}")  # GitHub's own record
    assert policy.request.id not in pull.body
    assert "replicas: 2  # raised for the sale" in github.git(
        "show", f"{github.head_sha(pull)}:{WEB}"
    )
    assert "PATCH /repos/acme/deploy/pulls/1" in github.requests

    github.review_as(number, "alice-gh", "APPROVE", "ok")
    outcomes = synced(provider, policy, crew_author="kubecrew-bot")
    assert [(o.request, o.kind) for o in outcomes] == [(new.id, "answered"), (new.id, "ended")]
    (granted,) = policy.store.approval(new.id).answers
    assert (granted.by.name, granted.via) == ("alice", "pull-request")
