"""The PR channel on GitHub: a person's review on github.com answers the request the crew's PR
carries. GitHub is the local server speaking its REST API over a real bare repository; the PR is
opened by the gitops server's `propose_change`, as the token's account (`kubecrew-bot`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.github import FakeGitHub, github_side, hosted_clone, running_github
from tests.support.pr_channel import Policy, crew_pr, synced

TOKEN = "ghp-kubecrew-pr-channel-5e1f"


@pytest.fixture
def clone(manifests: Path, tmp_path: Path) -> Path:
    return hosted_clone(manifests, tmp_path)


@pytest.fixture
def github(clone: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)  # where provider_for reads the token
    with running_github(github_side(clone), owner="acme", name="deploy", token=TOKEN) as fake:
        yield fake


def test_an_approval_on_github_approves_the_proposal_once(
    clone: Path, github: FakeGitHub, policy: Policy
) -> None:
    provider, number = crew_pr(
        clone,
        policy.request.id,
        provider="github",
        github_repo="acme/deploy",
        github_api_url=github.url,
    )
    pull = github.pulls[number]
    assert pull.user == "kubecrew-bot"
    assert pull.body.endswith(f"\nkubecrew-approval: {policy.request.id}")

    # The crew's own approval (posted as the token's account) cannot answer its own request.
    provider.review(number, author="cluster-operator", verdict="approve", body="")
    github.review_as(number, "alice-gh", "APPROVE", "ship it")
    first = synced(provider, policy, crew_author="kubecrew-bot")
    assert [(o.kind, o.reviewer) for o in first] == [("answered", "alice-gh"), ("ended", "")]

    decision = policy.store.get(policy.request.proposal).decision
    assert decision is not None and decision.outcome == "approved"
    assert decision.decided_by is not None and decision.decided_by.name == "alice"
    assert [(a.via, a.reason) for a in policy.now().answers] == [
        ("pull-request", f"approved pull request #{number}: ship it")
    ]
    (comment,) = pull.comments
    assert comment["user"]["login"] == "kubecrew-bot"
    assert comment["body"].startswith(f"Approval request {policy.request.id} is granted")

    assert synced(provider, policy, crew_author="kubecrew-bot") == []
    assert len(pull.comments) == 1
    assert not any(TOKEN in c["body"] for c in pull.comments)
