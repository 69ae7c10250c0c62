"""From a merged pull request to live objects, and back from a manual edit, on the sandbox."""

from __future__ import annotations

from pathlib import Path

from mcp_servers.gitops.server import build
from sandbox.server import Sandbox
from tests.support.gitops import Call, session, settings_for
from tests.support.kubectl import Kubectl


def test_propose_review_merge_sync_makes_the_object_live(
    manifests: Path, sandbox: Sandbox, kubectl: Kubectl
) -> None:
    server = build(settings_for(manifests, sandbox.kubeconfig))

    async def script(call: Call) -> None:
        first = await call("sync", dry_run=False)
        assert first["ok"], first
        assert {o["action"] for o in first["objects"]} == {"create"}
        opened = await call(
            "propose_change",
            title="Scale web to 3",
            path="apps/shop/web.yaml",
            kind="Deployment",
            name="web",
            edits=[{"path": "spec.replicas", "value": 3}],
        )
        await call("review_pr", number=opened["number"], verdict="approve")
        await call("merge_pr", number=opened["number"])
        planned = await call("sync")  # dry run by default
        web = next(o for o in planned["objects"] if o["kind"] == "Deployment")
        assert web["action"] == "update"
        assert web["changes"] == [{"path": "spec.replicas", "git": 3, "live": 1}]
        assert kubectl.json("get", "deployment", "web", "-n", "shop")["spec"]["replicas"] == 1
        done = await call("sync", dry_run=False)
        assert done["ok"], done

    session(server, script)
    live = kubectl.json("get", "deployment", "web", "-n", "shop")
    assert live["spec"]["replicas"] == 3
    assert live["metadata"]["labels"]["kubecrew.io/gitops-repo"] == "manifests"


def test_a_field_git_removes_is_removed_from_the_live_object(
    manifests: Path, sandbox: Sandbox, kubectl: Kubectl
) -> None:
    """A removal changes nothing the manifest says, so only the apply's own preview shows it:
    the sync must report and apply it rather than call the object unchanged."""
    server = build(settings_for(manifests, sandbox.kubeconfig))
    args = {"path": "spec.template.spec.containers[name=web].args", "value": ["-g", "daemon off;"]}

    async def script(call: Call) -> None:
        await call("sync", dry_run=False)
        for edits in ([args], [{"path": args["path"], "delete": True}]):
            opened = await call(
                "propose_change", title="web args", path="apps/shop/web.yaml",
                kind="Deployment", name="web", edits=edits,
            )  # fmt: skip
            await call("review_pr", number=opened["number"], verdict="approve")
            await call("merge_pr", number=opened["number"])
            planned = await call("sync")
            web = next(o for o in planned["objects"] if o["kind"] == "Deployment")
            assert web["action"] == "update", planned
            assert (await call("sync", dry_run=False))["ok"]
        assert web["changes"] == [
            {"path": "spec.template.spec.containers[name=web].args", "git": None,
             "live": ["-g", "daemon off;"]}
        ]  # fmt: skip

    session(server, script)
    pod = kubectl.json("get", "deployment", "web", "-n", "shop")["spec"]["template"]["spec"]
    assert "args" not in pod["containers"][0]


def test_manual_edit_is_reported_as_drift_and_sync_reapplies_git(
    manifests: Path, sandbox: Sandbox, kubectl: Kubectl
) -> None:
    server = build(settings_for(manifests, sandbox.kubeconfig))

    async def script(call: Call) -> None:
        await call("sync", dry_run=False)
        clean = await call("drift")
        assert clean["out_of_sync"] == [] and clean["checked"] == 3
        kubectl(
            "patch",
            "deployment",
            "web",
            "-n",
            "shop",
            "--type=merge",
            "-p",
            '{"spec":{"replicas":5}}',
        )
        report = await call("drift", namespace="shop")
        assert [(o["kind"], o["state"]) for o in report["out_of_sync"]] == [
            ("Deployment", "drifted")
        ]
        assert report["out_of_sync"][0]["diffs"] == [{"path": "spec.replicas", "git": 1, "live": 5}]
        await call("sync", dry_run=False)
        assert (await call("drift"))["out_of_sync"] == []

    session(server, script)
    assert kubectl.json("get", "deployment", "web", "-n", "shop")["spec"]["replicas"] == 1


def test_prune_deletes_objects_the_repository_no_longer_defines(
    manifests: Path, sandbox: Sandbox, kubectl: Kubectl
) -> None:
    server = build(settings_for(manifests, sandbox.kubeconfig))
    without_service = (manifests / "apps/shop/web.yaml").read_text().split("---")[0]

    async def script(call: Call) -> None:
        await call("sync", dry_run=False)
        opened = await call(
            "propose_change",
            title="Drop service",
            path="apps/shop/web.yaml",
            content=without_service,
        )
        await call("review_pr", number=opened["number"], verdict="approve")
        await call("merge_pr", number=opened["number"])
        planned = await call("sync", prune=True)
        assert planned["pruned"] == [
            {"kind": "Service", "namespace": "shop", "name": "web", "action": "would delete"}
        ]
        done = await call("sync", prune=True, dry_run=False)
        assert [p["action"] for p in done["pruned"]] == ["deleted"]

    session(server, script)
    assert kubectl.fails("get", "service", "web", "-n", "shop")
