"""Merges and syncs leave a trail: each one writes one record to the policy store's audit log.

The gitops server runs as the crew starts it for an agent (audit on, the crew's policy store,
the agent's name) against a real git repository, a real SQLite store and the sandbox. A record
says who, what (the PR's number, title and merge commit; the objects a sync applied) and the
result, and never holds a manifest or a Secret's value.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from core.policy.audit import AuditRecord
from core.policy.store.sqlite import SqliteStore
from kubecrew.crew import Crew
from mcp_servers.gitops.server import build
from mcp_servers.gitops.settings import GitopsSettings
from sandbox.server import Sandbox
from tests.support.gitops import Call, ToolFailed, git, session, settings_for

SECRET_VALUE = "hunter2-do-not-log-me"
SECRET = f"""\
apiVersion: v1
kind: Secret
metadata:
  name: shop-db
  namespace: shop
stringData:
  password: {SECRET_VALUE}
"""


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "policy" / "store.sqlite"


def audited(repo: Path, store_path: Path, **extra: object) -> GitopsSettings:
    """The settings the crew gives the dev_team agent's gitops server (`Crew.servers`)."""
    crew = Crew(None, None, repo, (), str(store_path), None)
    given = crew.servers("dev_team").gitops
    assert given is not None
    return GitopsSettings(**{**given.__dict__, "state_dir": repo.parent / "state", **extra})


def mutations(store_path: Path) -> list[AuditRecord]:
    store = SqliteStore(store_path)
    try:
        return store.audit(kind="mutation")
    finally:
        store.close()


def test_the_crew_starts_the_gitops_server_audited_as_the_agent(manifests: Path) -> None:
    crew = Crew(None, None, manifests, (), "/var/kubecrew/store.sqlite", None)
    gitops = crew.servers("cluster_operator").gitops
    assert gitops is not None
    assert (gitops.audit, gitops.policy_store, gitops.agent) == (
        True,
        "/var/kubecrew/store.sqlite",
        "cluster_operator",
    )


def test_a_merge_writes_one_record_saying_who_what_and_the_result(
    manifests: Path, store_path: Path
) -> None:
    server = build(audited(manifests, store_path))
    numbers: list[int] = []

    async def script(call: Call) -> None:
        opened = await call(
            "propose_change", title="Scale web to 3", path="apps/shop/web.yaml",
            kind="Deployment", name="web", edits=[{"path": "spec.replicas", "value": 3}],
        )  # fmt: skip
        numbers.append(opened["number"])
        await call("review_pr", number=opened["number"], verdict="approve")
        assert mutations(store_path) == []  # opening and reviewing change no branch
        merged = await call("merge_pr", number=opened["number"])
        numbers.append(merged["merge_commit"])

    session(server, script)
    number, commit = numbers
    assert commit == git(manifests, "rev-parse", "main").strip()
    (record,) = mutations(store_path)
    assert record.actor == "agent dev_team"
    assert record.result == "merged"
    assert record.details["pr"] == number
    assert record.details["title"] == "Scale web to 3"
    assert record.details["merge_commit"] == commit
    assert f"#{number}" in record.subject and "Scale web to 3" in record.summary


def test_a_refused_merge_is_recorded_as_refused(manifests: Path, store_path: Path) -> None:
    server = build(audited(manifests, store_path))

    async def script(call: Call) -> None:
        opened = await call(
            "propose_change", title="Scale web to 9", path="apps/shop/web.yaml",
            kind="Deployment", name="web", edits=[{"path": "spec.replicas", "value": 9}],
        )  # fmt: skip
        with pytest.raises(ToolFailed, match="not approved"):
            await call("merge_pr", number=opened["number"])

    session(server, script)
    (record,) = mutations(store_path)
    assert record.actor == "agent dev_team" and record.details["pr"] == 1
    assert record.result.startswith("failed: ") and "not approved" in record.result


def test_a_direct_revert_writes_one_record(manifests: Path, store_path: Path) -> None:
    server = build(audited(manifests, store_path, allow_direct_revert=True))
    done: dict[str, object] = {}

    async def script(call: Call) -> None:
        opened = await call(
            "propose_change", title="Scale web to 4", path="apps/shop/web.yaml",
            kind="Deployment", name="web", edits=[{"path": "spec.replicas", "value": 4}],
        )  # fmt: skip
        await call("review_pr", number=opened["number"], verdict="approve")
        await call("merge_pr", number=opened["number"])
        done.update(await call("revert_pr", number=opened["number"], direct=True))

    session(server, script)
    merge, revert = mutations(store_path)
    assert merge.result == "merged"
    assert revert.result == "reverted" and revert.details["pr"] == 1
    assert revert.details["revert_commit"] == done["revert_commit"]


def test_a_sync_that_applies_writes_one_record_naming_objects_never_values(
    manifests: Path, store_path: Path, sandbox: Sandbox
) -> None:
    (manifests / "apps" / "shop" / "db-secret.yaml").write_text(SECRET)
    git(manifests, "add", ".")
    git(manifests, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "db secret")
    server = build(audited(manifests, store_path, kubeconfig=sandbox.kubeconfig))

    async def script(call: Call) -> None:
        planned = await call("sync")  # a dry run applies nothing: no record
        assert planned["dry_run"] and mutations(store_path) == []
        done = await call("sync", dry_run=False)
        assert done["ok"], done

    session(server, script)
    (record,) = mutations(store_path)
    assert record.actor == "agent dev_team"
    assert record.result == "applied"
    assert record.details["commit"] == git(manifests, "rev-parse", "main").strip()
    objects = str(record.details["objects"])
    assert "Deployment shop/web create" in objects
    assert "Secret shop/shop-db create" in objects
    text = json.dumps(record.model_dump(mode="json"))
    for leak in (SECRET_VALUE, base64.b64encode(SECRET_VALUE.encode()).decode(), "stringData"):
        assert leak not in text


def test_without_audit_the_server_writes_no_store(manifests: Path, tmp_path: Path) -> None:
    """A host that never heard of the policy store keeps working without one."""
    server = build(settings_for(manifests))

    async def script(call: Call) -> None:
        opened = await call(
            "propose_change", title="Scale web to 2", path="apps/shop/web.yaml",
            kind="Deployment", name="web", edits=[{"path": "spec.replicas", "value": 2}],
        )  # fmt: skip
        await call("review_pr", number=opened["number"], verdict="approve")
        await call("merge_pr", number=opened["number"])

    session(server, script)
    assert not list(tmp_path.rglob("*.sqlite"))
