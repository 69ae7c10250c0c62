"""Finding 10: `kubecrew audit verify` said "intact" after edits made behind the store's back.

Each edit here is one someone covering their tracks makes with sqlite3 (or kubectl): the last
record deleted and the head row moved back onto the one before; a record's `subject` or `kind`
column changed (the columns lookups filter on, while verify read only the JSON); whitespace added
to a record's stored JSON; the last record rewritten with its hash recomputed and the head moved
to match, which anyone who knows sha256 can do. The chain now covers every stored column, the
JSON must be stored as the store wrote it, and the head carries a seal (an HMAC under a key only
the store's writer holds), so verify names each one and exits 1. The column edit also made a
used approval carry a second write, because the gate looked for the earlier write by subject:
it is refused now whatever the log's columns say.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from core.policy import audit
from core.policy.audit import AuditEntry, AuditRecord
from core.policy.negotiation import negotiate
from core.policy.store.kubernetes import KubernetesStore
from core.policy.store.sqlite import SqliteStore
from mcp_servers.kube.settings import KubeSettings
from sandbox.server import Sandbox
from tests.support.kube_tools import KubeTools
from tests.support.kubectl import Kubectl
from tests.support.mcp_hosts import KUBECREW
from tests.support.policies import NOON, POLICIES, defaults, downscale
from tests.support.shop import WEB

SEAL = "carries a seal the store's key did not make"


def verify(store: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KUBECREW, "audit", "verify", "--store", store],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "KUBECREW_DEBUG": "", **env},
    )


@pytest.fixture
def logged(tmp_path: Path) -> Path:
    """A store holding a negotiated downscale (records 1-5) and a mutation (record 6)."""
    path = tmp_path / "store.sqlite"
    store = SqliteStore(path)
    proposal = downscale()
    store.propose(proposal)
    negotiate(store, defaults(), proposal.id, now=NOON)
    applied = AuditEntry(
        at=NOON,
        actor="agent cluster-operator",
        kind="mutation",
        subject="Deployment shop/web",
        summary="scale: scale Deployment shop/web 5 -> 3 replicas directly",
        result="applied",
    )
    store.record([applied])
    store.close()
    return path


def _rewrite_the_last_record(db: sqlite3.Connection) -> None:
    """Change record 6's result and recompute its hash, then move the head onto it."""
    (body,) = db.execute("SELECT body FROM audit WHERE seq = 6").fetchone()
    record = AuditRecord.model_validate_json(body)
    forged = record.model_copy(update={"result": "failed: nothing happened"})
    forged = forged.model_copy(update={"hash": forged.expected_hash()})
    db.execute("UPDATE audit SET body = ? WHERE seq = 6", (forged.model_dump_json(),))
    db.execute("UPDATE audit_head SET hash = ?", (forged.hash,))


EDITS = {
    "last-record-and-head-cut": (
        [
            "DELETE FROM audit WHERE seq = 6",
            "UPDATE audit_head SET seq = 5, "
            "hash = (SELECT json_extract(body, '$.hash') FROM audit WHERE seq = 5)",
        ],
        SEAL,
    ),
    "subject-column": (
        ["UPDATE audit SET subject = 'p-00000000' WHERE seq = 2"],
        "record 2 (evaluation p-",
    ),
    "kind-column": (
        ["UPDATE audit SET kind = 'mutation' WHERE seq = 5"],
        "kind mutation",
    ),
    "trailing-whitespace": (
        ["UPDATE audit SET body = body || ' ' WHERE seq = 4"],
        "record 4 (evaluation p-",
    ),
    "last-record-rewritten-with-its-hash": ([], SEAL),
}


@pytest.mark.parametrize("statements, named", EDITS.values(), ids=EDITS.keys())
def test_an_edit_behind_the_stores_back_is_named_by_audit_verify(
    logged: Path, statements: list[str], named: str
) -> None:
    assert verify(str(logged)).returncode == 0
    with sqlite3.connect(logged) as db:
        for statement in statements:
            assert db.execute(statement).rowcount == 1
        if not statements:
            _rewrite_the_last_record(db)
    db.close()

    found = verify(str(logged))

    assert found.returncode == 1, found.stdout
    assert named in found.stdout, found.stdout
    assert "the audit log is not intact" in found.stderr


def test_a_used_approval_stays_used_when_the_logs_columns_are_edited(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    kubectl("apply", "-f", "-", input=WEB)
    kubectl("scale", "deploy/web", "-n", "shop", "--replicas=5")
    path = tmp_path / "store.sqlite"
    store = SqliteStore(path)
    proposal = downscale(to=3)
    store.propose(proposal)
    decision = negotiate(store, defaults(), proposal.id, now=NOON).decision
    store.close()
    assert decision is not None and decision.approves
    gate = KubeTools(
        KubeSettings(
            kubeconfig=sandbox.kubeconfig,
            policies=(POLICIES,),
            policy_store=str(path),
            agent="dev-team",
        )
    )
    scale = {"name": "web", "namespace": "shop", "replicas": 3, "proposal": proposal.id}
    gate.ok("scale", **scale)
    with sqlite3.connect(path) as db:  # hide the write from a lookup by subject
        db.execute("UPDATE audit SET subject = 'elsewhere' WHERE kind = 'mutation'")
    db.close()
    kubectl("scale", "deploy/web", "-n", "shop", "--replicas=5")  # someone scaled it back

    again = gate.fails("scale", **scale)

    assert f"proposal {proposal.id} was used already, by agent dev-team" in again
    assert kubectl.json("get", "deploy/web", "-n", "shop")["spec"]["replicas"] == 5
    found = verify(str(path))
    assert found.returncode == 1 and "its columns were edited" in found.stdout, found.stdout


def test_a_kubernetes_head_moved_back_over_a_deleted_record_is_named(
    sandbox: Sandbox, kubectl: Kubectl
) -> None:
    store = KubernetesStore(kubeconfig=sandbox.kubeconfig)
    proposal = downscale()
    store.propose(proposal)
    negotiate(store, defaults(), proposal.id, now=NOON)
    records = store.audit()
    store.close()
    env = {"KUBECONFIG": str(sandbox.kubeconfig)}
    assert verify("kubernetes", **env).returncode == 0
    last, before = records[-1], records[-2]
    ns = ["-n", "kubecrew-system"]
    kubectl("delete", "auditrecord", f"{last.seq:012d}", *ns)
    moved = json.dumps({"spec": {"seq": before.seq, "hash": before.hash}})
    kubectl("patch", "audithead", "head", "--type=merge", "-p", moved, *ns)

    found = verify("kubernetes", **env)

    assert found.returncode == 1 and SEAL in found.stdout, found.stdout
    assert audit.verify(records[:-1], audit.AuditHead(seq=before.seq, hash=before.hash)) == []
