"""Drift reconciled both ways, and undoing a merge by PR or directly, on the sandbox, over MCP.

adopt_live takes a manual change on the cluster into git as a pull request that changes exactly
the drifted line (comments kept); after it merges, sync has nothing to do and drift is clean.
revert_pr undoes a merged change as a pull request, or, where the server allows it, as a commit
straight onto the base branch.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from mcp_servers.gitops.server import build
from mcp_servers.gitops.settings import GitopsSettings
from sandbox.server import Sandbox
from tests.support.github import running_github
from tests.support.gitops import Call, ToolFailed, git, session, settings_for
from tests.support.kubectl import Kubectl


@pytest.mark.parametrize(
    ("command", "removed", "added"),
    [
        (
            ["scale", "deployment", "web", "--replicas=4"],
            "-  replicas: 1  # raised for the sale",
            "+  replicas: 4  # raised for the sale",
        ),
        (
            ["set", "image", "deployment/web", "web=nginx:1.29"],
            "-          image: nginx:1.27  # pinned",
            "+          image: nginx:1.29  # pinned",
        ),
        (
            ["label", "deployment", "web", "app-"],
            "-  labels:\n-    app: web  # selected by the Service",
            None,
        ),
    ],
    ids=["scale", "set-image", "label-removed"],
)
def test_adopt_live_turns_a_manual_change_into_a_one_line_pr(
    manifests: Path,
    sandbox: Sandbox,
    kubectl: Kubectl,
    command: list[str],
    removed: str,
    added: str | None,
) -> None:
    server = build(settings_for(manifests, sandbox.kubeconfig))

    async def script(call: Call) -> None:
        await call("sync", dry_run=False)
        kubectl(*command, "-n", "shop")
        drifted = (await call("drift"))["out_of_sync"]
        assert [(o["kind"], o["name"], o["state"]) for o in drifted] == [
            ("Deployment", "web", "drifted")
        ]
        assert "adopt_live" in (await call("drift"))["hint"]
        opened = await call("adopt_live", kind="Deployment", name="web", namespace="shop")
        assert opened["files"] == ["apps/shop/web.yaml"]
        assert opened["adopted"] == drifted[0]["diffs"]
        pr = await call("get_pr", number=opened["number"])
        changed = [
            ln for ln in pr["diff"].splitlines() if ln[:1] in "+-" and ln[:3] not in "+++---"
        ]
        assert changed == removed.splitlines() + ([added] if added else [])
        assert pr["pr"]["title"].startswith("Adopt live Deployment web: ")
        await call("review_pr", number=opened["number"], verdict="approve")
        await call("merge_pr", number=opened["number"])
        planned = await call("sync")
        assert {o["action"] for o in planned["objects"]} == {"unchanged"}, planned
        assert (await call("drift"))["out_of_sync"] == []

    session(server, script)
    text = (manifests / "apps/shop/web.yaml").read_text()
    assert text.startswith("# The web front end. Owned by team shop.\n")
    assert git(manifests, "status", "--porcelain") == ""


def test_adopt_live_refuses_what_it_cannot_adopt(
    manifests: Path, sandbox: Sandbox, kubectl: Kubectl
) -> None:
    server = build(settings_for(manifests, sandbox.kubeconfig))

    async def script(call: Call) -> None:
        await call("sync", dry_run=False)
        kubectl("create", "configmap", "hand-made", "-n", "shop", "--from-literal=a=b")
        with pytest.raises(ToolFailed, match="not managed from this repository"):
            await call("adopt_live", kind="ConfigMap", name="hand-made", namespace="shop")
        with pytest.raises(ToolFailed, match="matches git already; nothing to adopt"):
            await call("adopt_live", kind="Deployment", name="web", namespace="shop")
        assert (await call("list_prs"))["prs"] == []

    session(server, script)


def merged_scale_change(replicas: int) -> Callable[[Call], Awaitable[int]]:
    """A script step: propose, approve and merge `spec.replicas: replicas`; the PR number."""

    async def step(call: Call) -> int:
        opened = await call(
            "propose_change",
            title=f"Scale web to {replicas}",
            path="apps/shop/web.yaml",
            kind="Deployment",
            name="web",
            edits=[{"path": "spec.replicas", "value": replicas}],
        )
        await call("review_pr", number=opened["number"], verdict="approve")
        await call("merge_pr", number=opened["number"])
        return int(opened["number"])

    return step


def test_direct_revert_commits_onto_the_base_branch_and_sync_applies_it(
    manifests: Path, sandbox: Sandbox, kubectl: Kubectl
) -> None:
    settings = GitopsSettings(
        repo=manifests,
        state_dir=manifests.parent / "state",
        kubeconfig=sandbox.kubeconfig,
        allow_direct_revert=True,
    )
    server = build(settings)

    async def script(call: Call) -> None:
        number = await merged_scale_change(4)(call)
        await call("sync", dry_run=False)
        merge = git(manifests, "rev-parse", "main").strip()
        done = await call("revert_pr", number=number, direct=True)
        assert done["next"] == "sync to apply it to the cluster"
        assert git(manifests, "rev-parse", "main").strip() == done["revert_commit"]
        assert git(manifests, "log", "-1", "--format=%P", "main").strip() == merge
        assert (await call("list_prs", state="all"))["total"] == 1  # no revert PR
        comments = (await call("get_pr", number=number))["pr"]["comments"]
        assert done["revert_commit"] in comments[-1]["body"]
        planned = await call("sync")
        web = next(o for o in planned["objects"] if o["kind"] == "Deployment")
        assert web["changes"] == [{"path": "spec.replicas", "git": 1, "live": 4}]
        await call("sync", dry_run=False)

    session(server, script)
    assert "replicas: 1  # raised for the sale" in (manifests / "apps/shop/web.yaml").read_text()
    assert git(manifests, "status", "--porcelain") == ""
    assert kubectl.json("get", "deployment", "web", "-n", "shop")["spec"]["replicas"] == 1


def test_revert_is_a_pull_request_unless_direct_reverts_are_allowed(manifests: Path) -> None:
    server = build(settings_for(manifests))

    async def script(call: Call) -> None:
        number = await merged_scale_change(4)(call)
        merge = git(manifests, "rev-parse", "main").strip()
        with pytest.raises(ToolFailed, match="direct reverts are not allowed on this server"):
            await call("revert_pr", number=number, direct=True)
        opened = await call("revert_pr", number=number)
        assert opened["reverts"] == number and opened["files"] == ["apps/shop/web.yaml"]
        assert git(manifests, "rev-parse", "main").strip() == merge  # untouched until merged
        unmerged = (await call("list_prs"))["prs"][0]["number"]
        assert unmerged == opened["number"]

    session(server, script)
    assert "replicas: 4  # raised for the sale" in (manifests / "apps/shop/web.yaml").read_text()


def test_direct_revert_needs_the_local_provider(
    manifests: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, clone = tmp_path / "github" / "deploy.git", tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--bare", str(manifests), str(bare))
    git(tmp_path, "clone", "-q", str(bare), str(clone))
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-direct-revert-test")
    with running_github(bare, token="ghp-direct-revert-test") as github:
        settings = GitopsSettings(
            repo=clone,
            state_dir=tmp_path / "state",
            provider="github",
            github_repo="acme/deploy",
            github_api_url=github.url,
            allow_direct_revert=True,
        )
        server = build(settings)

        async def script(call: Call) -> None:
            with pytest.raises(ToolFailed, match="direct revert needs the local provider"):
                await call("revert_pr", number=1, direct=True)

        session(server, script)
