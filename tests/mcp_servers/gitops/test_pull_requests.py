"""Proposing, reviewing, merging and reverting changes on a real git repository, over MCP."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_servers.gitops.providers import provider_for
from mcp_servers.gitops.repo import Repository
from mcp_servers.gitops.server import build
from tests.support.gitops import Call, ToolFailed, git, session, settings_for


def test_propose_keeps_comments_and_touches_only_the_edited_field(manifests: Path) -> None:
    server = build(settings_for(manifests))

    async def script(call: Call) -> None:
        opened = await call(
            "propose_change",
            title="Scale web to 3 for the sale",
            path="apps/shop/web.yaml",
            kind="Deployment",
            name="web",
            edits=[{"path": "spec.replicas", "value": 3}],
        )
        pr = await call("get_pr", number=opened["number"])
        diff = pr["diff"]
        assert "-  replicas: 1  # raised for the sale" in diff
        assert "+  replicas: 3  # raised for the sale" in diff
        assert diff.count("\n+") == 2  # the +++ header and the one changed line
        assert {c["name"]: c["state"] for c in pr["checks"]} == {
            "manifests": "success",
            "mergeable": "success",
        }
        text = (await call("read_manifest", path="apps/shop/web.yaml", ref=opened["branch"]))[
            "text"
        ]
        assert "# The web front end. Owned by team shop." in text
        assert "image: nginx:1.27  # pinned" in text

    session(server, script)
    # The work tree and the base branch are untouched until merge.
    assert "replicas: 1" in (manifests / "apps/shop/web.yaml").read_text()
    assert git(manifests, "status", "--porcelain") == ""


def test_merge_needs_approval_then_makes_a_merge_commit_and_updates_the_checkout(
    manifests: Path,
) -> None:
    settings = settings_for(manifests)
    server = build(settings)
    forge = provider_for(settings, Repository(manifests, author_name="t", author_email="t@x"))

    async def script(call: Call) -> None:
        opened = await call(
            "propose_change",
            title="Pin image",
            path="apps/shop/web.yaml",
            kind="Deployment",
            name="web",
            edits=[
                {"path": "spec.template.spec.containers[name=web].image", "value": "nginx:1.28"}
            ],
        )
        number = opened["number"]
        with pytest.raises(ToolFailed, match="not approved"):
            await call("merge_pr", number=number)
        # ana asks for changes on the forge; the server's own approval does not outvote her
        forge.review(number, author="ana", verdict="request_changes", body="pin 1.28.1")
        assert not (await call("review_pr", number=number, verdict="approve"))["approved"]
        with pytest.raises(ToolFailed, match="not approved"):
            await call("merge_pr", number=number)
        forge.review(number, author="ana", verdict="approve", body="")
        assert (await call("get_pr", number=number))["approved"]
        await call("comment_pr", number=number, body="ship it")
        (comment,) = (await call("get_pr", number=number))["pr"]["comments"]
        assert comment["author"] == "kubecrew"  # the server's identity, never the caller's
        merged = await call("merge_pr", number=number)
        assert merged["state"] == "merged"
        prs = await call("list_prs", state="merged")
        assert [p["number"] for p in prs["prs"]] == [number]

    session(server, script)
    parents = git(manifests, "log", "-1", "--format=%P", "main").split()
    assert len(parents) == 2  # a real merge commit
    assert "image: nginx:1.28  # pinned" in (manifests / "apps/shop/web.yaml").read_text()
    assert git(manifests, "status", "--porcelain") == ""


def test_revert_opens_a_pr_that_undoes_the_merge(manifests: Path) -> None:
    server = build(settings_for(manifests))

    async def script(call: Call) -> None:
        opened = await call(
            "propose_change",
            title="Scale",
            path="apps/shop/web.yaml",
            kind="Deployment",
            name="web",
            edits=[{"path": "spec.replicas", "value": 4}],
        )
        await call("review_pr", number=opened["number"], verdict="approve")
        await call("merge_pr", number=opened["number"])
        revert = await call("revert_pr", number=opened["number"])
        await call("review_pr", number=revert["number"], verdict="approve")
        await call("merge_pr", number=revert["number"])
        text = (await call("read_manifest", path="apps/shop/web.yaml"))["text"]
        assert "replicas: 1  # raised for the sale" in text

    session(server, script)


def test_new_manifest_and_find_manifest(manifests: Path) -> None:
    server = build(settings_for(manifests))
    config = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\n  namespace: shop\n"

    async def script(call: Call) -> None:
        opened = await call(
            "propose_change", title="Add config", path="apps/shop/config.yaml", content=config
        )
        found = await call(
            "find_manifest", kind="ConfigMap", name="web-config", ref=opened["branch"]
        )
        assert found["found"][0]["file"] == "apps/shop/config.yaml"
        found = await call("find_manifest", kind="Service", name="web", namespace="shop")
        assert found["found"][0] == {
            "file": "apps/shop/web.yaml",
            "document": 1,
            "apiVersion": "v1",
            "kind": "Service",
            "namespace": "shop",
            "name": "web",
        }
        listed = await call("list_manifests")
        assert {o["kind"] for o in listed["objects"]} == {"Deployment", "Service", "Namespace"}

    session(server, script)


def test_one_pr_edits_a_manifest_and_adds_a_new_file_beside_it(manifests: Path) -> None:
    server = build(settings_for(manifests))
    pdb = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: web\n"

    async def script(call: Call) -> None:
        opened = await call(
            "propose_change",
            title="web survives a node failure",
            path="apps/shop/web.yaml",
            kind="Deployment",
            name="web",
            edits=[{"path": "spec.replicas", "value": 2}],
            new_files={"apps/shop/web-pdb.yaml": pdb},
        )
        assert sorted(opened["files"]) == ["apps/shop/web-pdb.yaml", "apps/shop/web.yaml"]
        pr = await call("get_pr", number=opened["number"])
        assert "+  replicas: 2" in pr["diff"] and "+kind: PodDisruptionBudget" in pr["diff"]
        with pytest.raises(ToolFailed, match="exists already"):
            await call(
                "propose_change",
                title="again",
                path="apps/shop/web.yaml",
                kind="Deployment",
                name="web",
                edits=[{"path": "spec.replicas", "value": 2}],
                new_files={"namespaces.yaml": pdb},
            )

    session(server, script)


@pytest.mark.parametrize(
    "path",
    ["../outside.yaml", "/etc/passwd", "apps/../../x.yaml", ".git/config", "a\nb.yaml", "..\\x"],
    ids=["dotdot", "absolute", "nested-dotdot", "git-dir", "newline", "backslash"],
)
def test_path_traversal_is_refused(manifests: Path, path: str) -> None:
    server = build(settings_for(manifests))

    async def script(call: Call) -> None:
        with pytest.raises(ToolFailed, match="repository"):
            await call("read_manifest", path=path)
        with pytest.raises(ToolFailed, match="repository"):
            await call("propose_change", title="x", path=path, content="a: 1\n")

    session(server, script)


def test_symlink_out_of_the_repository_is_refused(manifests: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.yaml").write_text("password: x\n")
    (manifests / "leak.yaml").symlink_to("../secret.yaml")
    (manifests / "alias.yaml").symlink_to("namespaces.yaml")
    git(manifests, "add", ".")
    git(manifests, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "-m", "links")
    server = build(settings_for(manifests))

    async def script(call: Call) -> None:
        with pytest.raises(ToolFailed, match="symlink out of the repository"):
            await call("read_manifest", path="leak.yaml")
        assert "kind: Namespace" in (await call("read_manifest", path="alias.yaml"))["text"]

    session(server, script)


def test_read_only_server_has_no_write_tools(manifests: Path) -> None:
    server = build(settings_for(manifests, read_only=True))

    async def script(call: Call) -> None:
        with pytest.raises(ToolFailed):
            await call("merge_pr", number=1)

    session(server, script)
