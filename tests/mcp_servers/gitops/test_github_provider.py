"""The gitops server with the GitHub provider, over MCP, against a local server speaking GitHub's
REST API on top of a real bare repository (the clone's `origin`)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from core.errors import InvalidArgument, TooManyRequests
from kubecrew.cli.main import app
from mcp_servers.gitops.providers import provider_for
from mcp_servers.gitops.repo import Repository
from mcp_servers.gitops.server import build
from mcp_servers.gitops.settings import GitopsSettings
from sandbox.server import Sandbox
from tests.support.github import FakeGitHub, running_github
from tests.support.gitops import Call, ToolFailed, git, session, settings_for
from tests.support.kubectl import Kubectl

TOKEN = "ghp-kubecrew-test-7d41c0ffee"
WEB = "apps/shop/web.yaml"


@pytest.fixture
def github_side(manifests: Path, tmp_path: Path) -> Path:
    """The repository as GitHub holds it: a bare repository the clone pushes to."""
    bare = tmp_path / "github" / "deploy.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(manifests), str(bare)], check=True)
    return bare


@pytest.fixture
def clone(github_side: Path, tmp_path: Path) -> Path:
    work = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(github_side), str(work)], check=True)
    return work


@pytest.fixture
def github(github_side: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    with running_github(github_side, owner="acme", name="deploy", token=TOKEN) as fake:
        yield fake


def on_github(clone: Path, github: FakeGitHub, **extra: Any) -> GitopsSettings:
    return settings_for(
        clone, provider="github", github_repo="acme/deploy", github_api_url=github.url, **extra
    )


def scale(replicas: int) -> dict[str, Any]:
    return {
        "title": f"Scale web to {replicas}",
        "path": WEB,
        "kind": "Deployment",
        "name": "web",
        "edits": [{"path": "spec.replicas", "value": replicas}],
    }


def test_a_change_goes_from_proposal_through_review_to_merge_and_revert(
    clone: Path, github_side: Path, github: FakeGitHub
) -> None:
    server = build(on_github(clone, github))

    async def script(call: Call) -> None:
        opened = await call("propose_change", **scale(4), labels=["scale"], body="For the sale.")
        number = opened["number"]
        assert opened["files"] == [WEB]
        listed = await call("list_prs")
        assert [(p["number"], p["labels"], p["approved"]) for p in listed["prs"]] == [
            (number, ["scale"], False)
        ]
        head = github.branch_sha(opened["branch"])  # pushed to GitHub's side
        assert head == git(clone, "rev-parse", opened["branch"]).strip()
        github.set_check(head, "kubeconform", conclusion="failure", summary="replicas over quota")
        pr = await call("get_pr", number=number)
        assert "-  replicas: 1  # raised for the sale" in pr["diff"]
        assert "+  replicas: 4  # raised for the sale" in pr["diff"]
        assert pr["pr"]["files"] == [WEB] and pr["pr"]["author"] == "kubecrew-bot"
        assert {c["name"]: c["state"] for c in pr["checks"]} == {
            "kubeconform": "failure",
            "mergeable": "success",
        }
        assert (await call("comment_pr", number=number, body="looks right"))["comments"] == 1
        asked = await call("review_pr", number=number, verdict="request_changes", body="quota?")
        assert not asked["approved"]
        with pytest.raises(ToolFailed, match="not approved"):
            await call("merge_pr", number=number)
        assert (await call("review_pr", number=number, verdict="approve"))["approved"]
        with pytest.raises(ToolFailed, match="checks failed: kubeconform: replicas over quota"):
            await call("merge_pr", number=number)
        github.set_check(head, "kubeconform", conclusion="success")
        merged = await call("merge_pr", number=number)
        assert merged["state"] == "merged"
        assert merged["merge_commit"] == github.branch_sha("main")
        assert [p["number"] for p in (await call("list_prs", state="merged"))["prs"]] == [number]

        revert = await call("revert_pr", number=number)
        assert revert["reverts"] == number and revert["files"] == [WEB]
        undo = await call("get_pr", number=revert["number"])
        assert "-  replicas: 4  # raised for the sale" in undo["diff"]
        assert "+  replicas: 1  # raised for the sale" in undo["diff"]
        assert undo["pr"]["reverts"] == number  # read back from the body GitHub holds
        assert undo["pr"]["body"].endswith(f"Reverts #{number}.")
        assert undo["pr"]["labels"] == ["revert"]

    session(server, script)
    main_on_github = git(github_side, "rev-parse", "main").strip()
    assert len(git(github_side, "log", "-1", "--format=%P", "main").split()) == 2  # a merge
    assert git(clone, "rev-parse", "main").strip() == main_on_github  # the base was fetched
    assert "replicas: 4  # raised for the sale" in (clone / WEB).read_text()
    assert git(clone, "status", "--porcelain") == ""


def test_list_prs_follows_githubs_pages(
    clone: Path, github_side: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    with running_github(github_side, token=TOKEN, max_per_page=5) as github:
        server = build(on_github(clone, github))

        async def script(call: Call) -> None:
            numbers = [(await call("propose_change", **scale(n)))["number"] for n in range(2, 14)]
            await call("close_pr", number=numbers[0])
            listed = await call("list_prs", limit=50)
            assert [p["number"] for p in listed["prs"]] == sorted(numbers[1:], reverse=True)
            closed = await call("list_prs", state="closed")
            assert [p["number"] for p in closed["prs"]] == [numbers[0]]

        session(server, script)
        pages = [r for r in github.requests if r.startswith("GET /repos/acme/deploy/pulls?")]
    assert any("page=3" in r for r in pages), pages  # 11 open PRs at 5 a page


def test_a_wrong_token_is_refused_naming_the_variable_never_the_token(
    clone: Path, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-wrong-and-secret")
    server = build(on_github(clone, github))

    async def script(call: Call) -> None:
        with pytest.raises(ToolFailed, match="Bad credentials") as refused:
            await call("list_prs")
        assert "set GITHUB_TOKEN to a token" in str(refused.value)
        assert "ghp-wrong-and-secret" not in str(refused.value)

    session(server, script)


def test_an_unknown_pull_request_is_not_found(clone: Path, github: FakeGitHub) -> None:
    server = build(on_github(clone, github))

    async def script(call: Call) -> None:
        with pytest.raises(ToolFailed, match="found nothing at GET /repos/acme/deploy/pulls/99"):
            await call("get_pr", number=99)

    session(server, script)


def test_the_rate_limit_is_too_many_requests_saying_when_to_retry(
    clone: Path, github: FakeGitHub
) -> None:
    settings = on_github(clone, github)
    provider = provider_for(settings, Repository(clone, author_name="t", author_email="t@x"))
    assert provider.list_prs() == []
    github.rate_limited = True
    with pytest.raises(TooManyRequests, match=r"rate limit .* retry in \d+ s"):
        provider.list_prs()


def test_a_push_github_refuses_fails_before_any_pull_request(
    clone: Path, github_side: Path, github: FakeGitHub
) -> None:
    # Someone else's commit already sits on the branch name at GitHub.
    main = git(github_side, "rev-parse", "main").strip()
    tree = git(github_side, "rev-parse", "main^{tree}").strip()
    theirs = git(
        github_side, "-c", "user.name=o", "-c", "user.email=o@x", "commit-tree", tree, "-p", main,
        "-m", "theirs",
    ).strip()  # fmt: skip
    git(github_side, "update-ref", "refs/heads/kubecrew/taken", theirs)
    server = build(on_github(clone, github))

    async def script(call: Call) -> None:
        with pytest.raises(ToolFailed, match="refused the push of branch kubecrew/taken"):
            await call("propose_change", **scale(3), branch="kubecrew/taken")

    session(server, script)
    assert github.pulls == {}


@pytest.mark.parametrize(
    ("extra", "token", "message"),
    [
        ({"github_repo": "acme/deploy"}, "", r"needs a token in \$GITHUB_TOKEN"),
        ({"github_repo": ""}, TOKEN, "--github-repo owner/name"),
        ({"github_repo": "acme"}, TOKEN, "not of the form owner/name"),
        ({"github_repo": "acme/deploy", "remote": "upstream"}, TOKEN, "no git remote 'upstream'"),
    ],
    ids=["no-token", "no-repo", "bad-repo", "no-remote"],
)
def test_a_github_misconfiguration_stops_the_server_at_start(
    clone: Path, monkeypatch: pytest.MonkeyPatch, extra: dict[str, Any], token: str, message: str
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", token)
    with pytest.raises(InvalidArgument, match=message):
        build(settings_for(clone, provider="github", **extra))


def test_both_command_lines_say_which_variable_to_set(
    clone: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    options = ["--repo", str(clone), "--provider", "github", "--github-repo", "acme/deploy"]
    done = subprocess.run(
        [sys.executable, "-m", "mcp_servers.gitops", *options],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2, done.stderr
    assert "needs a token in $GITHUB_TOKEN" in done.stderr
    assert "Traceback" not in done.stderr
    kubecrew = CliRunner().invoke(app, ["mcp", "gitops", *options])
    assert kubecrew.exit_code == 1
    assert "needs a token in $GITHUB_TOKEN" in kubecrew.output


def test_a_change_merged_on_github_syncs_to_the_cluster(
    clone: Path, github: FakeGitHub, sandbox: Sandbox, kubectl: Kubectl
) -> None:
    server = build(on_github(clone, github, kubeconfig=sandbox.kubeconfig))

    async def script(call: Call) -> None:
        assert (await call("sync", dry_run=False))["ok"]
        number = (await call("propose_change", **scale(3)))["number"]
        await call("review_pr", number=number, verdict="approve")
        await call("merge_pr", number=number)
        done = await call("sync", dry_run=False)
        assert done["ok"], done

    session(server, script)
    assert kubectl.json("get", "deployment", "web", "-n", "shop")["spec"]["replicas"] == 3
