"""An approval on a PR counts only when the PR's change is the action its request approves
(web 5 -> 1 in shop): another count, another field, or another object beside it is refused with
a comment naming the difference, and the request stays pending. Local forge and GitHub; the
comparison itself over whole files (`pr_changes.difference`) for the other action kinds."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.policy.actions import Action, parse_target
from kubecrew.channels.pr.changes import difference
from mcp_servers.gitops.providers import provider_for
from mcp_servers.gitops.providers.base import FileChange
from mcp_servers.gitops.repo import Repository
from mcp_servers.gitops.server import build
from tests.support.github import FakeGitHub, running_github
from tests.support.gitops import Call, session, settings_for
from tests.support.pr_channel import WEB, Policy, crew_pr, live_count_in_git, synced

TOKEN = "ghp-kubecrew-pr-match-77a0"
BINDING = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: web-admin}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects: [{kind: ServiceAccount, name: default, namespace: shop}]
"""


def opened(repo: Path, request_id: str, **change: Any) -> int:
    """A crew PR carrying `request_id` that makes `change` (propose_change's arguments)."""
    live_count_in_git(repo)
    numbers: list[int] = []

    async def script(call: Call) -> None:
        done = await call(
            "propose_change", title="Scale web down", path=WEB, kind="Deployment", name="web",
            body="web has used under 10% CPU for an hour.", approval=request_id, **change,
        )  # fmt: skip
        numbers.append(int(done["number"]))

    session(build(settings_for(repo)), script)
    return numbers[0]


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (
            {"edits": [{"path": "spec.replicas", "value": 3}]},
            "it sets spec.replicas of Deployment shop/web to 3, not 1",
        ),
        (
            {"edits": [{"path": "spec.replicas", "value": 1},
                       {"path": "spec.template.spec.containers[0].image", "value": "nginx:1"}]},
            "it changes spec.template.spec.containers[0].image of Deployment shop/web as well, "
            "and a scale changes spec.replicas only",
        ),
        (
            {"edits": [{"path": "spec.replicas", "value": 1}],
             "new_files": {"apps/shop/admin.yaml": BINDING}},
            "it also changes ClusterRoleBinding web-admin, which the request does not cover",
        ),
    ],
    ids=["another-count", "another-field", "another-object"],
)  # fmt: skip
def test_an_approval_of_a_pr_that_is_not_the_action_is_refused_with_the_difference(
    manifests: Path, policy: Policy, change: dict[str, Any], says: str
) -> None:
    number = opened(manifests, policy.request.id, **change)
    settings = settings_for(manifests)
    repo = Repository(manifests, author_name="kubecrew", author_email="kubecrew@localhost")
    provider = provider_for(settings, repo)
    provider.review(number, author="alice-gh", verdict="approve", body="")

    (outcome,) = synced(provider, policy)
    assert (outcome.kind, outcome.reviewer, outcome.detail) == ("mismatch", "alice-gh", says)
    (comment,) = provider.get(number).pr.comments
    assert comment.body == (
        f"@alice-gh: your approval was not counted: approval request {policy.request.id} is for "
        f"scale Deployment shop/web 5 -> 1 replicas directly, but this pull request does not make "
        f"that change: {says}. Ask the crew to fix the pull request, or answer the request where "
        f"it is listed (`kubecrew approvals show {policy.request.id}`)."
    )
    assert policy.now().state == "pending" and policy.now().answers == []
    assert synced(provider, policy) == []  # said once


def test_a_request_for_changes_on_a_mismatched_pr_still_denies(
    manifests: Path, policy: Policy
) -> None:
    provider, number = crew_pr(manifests, policy.request.id, replicas=3)
    provider.review(number, author="alice-gh", verdict="request_changes", body="wrong count")
    assert [o.kind for o in synced(provider, policy)] == ["answered", "ended"]
    assert policy.now().state == "denied"


@pytest.fixture
def github(manifests: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    bare = tmp_path / "github" / "deploy.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(manifests), str(bare)], check=True)
    work = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(bare), str(work)], check=True)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)  # where provider_for reads the token
    with running_github(bare, token=TOKEN) as fake:
        yield work, fake


def test_on_github_the_change_is_read_from_what_github_has(
    github: tuple[Path, FakeGitHub], policy: Policy
) -> None:
    clone, fake = github
    provider, number = crew_pr(
        clone, policy.request.id, replicas=3, provider="github", github_repo="acme/deploy",
        github_api_url=fake.url,
    )  # fmt: skip
    fake.review_as(number, "alice-gh", "APPROVE", "ship it")
    (outcome,) = synced(provider, policy, crew_author="kubecrew-bot")
    assert (outcome.kind, outcome.detail) == (
        "mismatch", "it sets spec.replicas of Deployment shop/web to 3, not 1",
    )  # fmt: skip
    assert policy.now().state == "pending"


def deployment(replicas: int, namespace: str = "shop") -> str:
    return (
        f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: {namespace}}}\n"
        f"spec:\n  replicas: {replicas}\n"
    )


QUOTA = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q, namespace: shop}\nspec: {}\n"


@pytest.mark.parametrize(
    ("action", "target", "changes", "says"),
    [
        ("apply", "namespace/shop",
         [FileChange(path="bp/shop.yaml", before=None, after=QUOTA)], ""),
        ("apply", "namespace/shop",
         [FileChange(path="bp/shop.yaml", before=None, after=QUOTA.replace("shop}", "bank}"))],
         "it also changes ResourceQuota bank/q, which the request does not cover"),
        ("apply", "deployment/web",
         [FileChange(path="web.yaml", before=None, after=deployment(2) + "---\n" + BINDING)],
         "it also changes ClusterRoleBinding web-admin, which the request does not cover"),
        ("delete", "deployment/web",
         [FileChange(path="web.yaml", before=deployment(2), after=None)], ""),
        ("delete", "deployment/web",
         [FileChange(path="web.yaml", before=deployment(2), after=deployment(0))],
         "it does not remove Deployment shop/web"),
        ("patch", "deployment/web",
         [FileChange(path="README.md", before="a", after="b")],
         "it does not change Deployment shop/web"),
        ("drain", "node/worker-1", [], "a drain is not a change a pull request makes"),
        ("apply", "deployment/web",
         [FileChange(path="kustomization.yaml", before="resources: [a.yaml]\n",
                     after="resources: [a.yaml, b.yaml]\n")],
         "it changes kustomization.yaml document 0, which is not one Kubernetes object"),
    ],
    ids=["blueprint-in-namespace", "other-namespace", "cluster-object", "delete",
         "not-deleted", "no-manifest", "not-by-pr", "kustomization"],
)  # fmt: skip
def test_the_comparison_for_other_kinds_of_action(
    action: str, target: str, changes: list[FileChange], says: str
) -> None:
    asked = Action.model_validate(
        {"type": action, "target": parse_target(target, namespace="shop"), "via": "pull-request"}
    )
    assert difference(asked, changes) == says
