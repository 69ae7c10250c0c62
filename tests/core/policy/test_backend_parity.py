"""Backend parity: the issue's scenarios give identical records on SQLite and on Kubernetes.

The same proposals (same ids, same `now`, same approval request ids) go through both backends:
the downscale the Dev Team counters with 3, its inverse (the proposer refuses the counter, so
the shop's admins decide, and alice grants through an MCP call), and a delete nobody answers
until it expires. Everything a reader can get back must be equal, down to the audit chain's
hashes: proposals, transcripts, decisions, approval requests, the audit records and the head.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from core.policy import approvals, audit
from core.policy.actions import Action, ReplicaChange, parse_target
from core.policy.catalog import PolicySet
from core.policy.negotiation import Deliberation, deliberate
from core.policy.proposals import Identity, Proposal
from core.policy.store.base import Store
from core.policy.store.kubernetes import KubernetesStore
from core.policy.store.sqlite import SqliteStore
from sandbox.server import Sandbox
from tests.support.policies import NOON, defaults

OPERATOR = Identity(kind="agent", name="cluster-operator")
ALICE = Identity(kind="person", name="alice", groups=("shop-admins",))
LATER = NOON + timedelta(minutes=20)


@pytest.fixture(scope="module")
def policies() -> PolicySet:
    return defaults()


def proposal(proposal_id: str, action: str, target: str, **fields: Any) -> Proposal:
    scaling = action == "scale"
    return Proposal.model_validate(
        {
            "id": proposal_id,
            "proposer": OPERATOR,
            "action": Action.model_validate(
                {
                    "type": action,
                    "target": parse_target(target, namespace="shop"),
                    "replicas": ReplicaChange(from_=5, to=1) if scaling else None,
                }
            ),
            "rationale": "underused" if scaling else "unused",
            "created": NOON,
            "metrics": {"cpu_utilization": 0.1},
            **fields,
        }
    )


def negotiate(store: Store, policies: PolicySet, proposal_id: str, request_id: str) -> None:
    """`negotiation.negotiate`'s one write, with the approval request id fixed for both runs."""
    record = store.get(proposal_id)
    target = store.target(record.proposal.action.target)
    outcome = deliberate(record.proposal, policies, target, now=NOON)
    if outcome.approval is not None:
        fixed = outcome.approval.model_copy(update={"id": request_id})
        outcome = Deliberation(outcome.evaluations, outcome.decision, fixed)
    store.decide(
        proposal_id,
        version=record.version,
        events=outcome.events(after=len(record.transcript)),
        decision=outcome.decision,
        approval=outcome.approval,
    )


def play(store: Store, policies: PolicySet) -> dict[str, Any]:
    """The three scenarios, then everything the store gives back."""
    store.propose(proposal("p-downscale", "scale", "deployment/web"))
    negotiate(store, policies, "p-downscale", "a-unused")
    store.propose(proposal("p-inverse", "scale", "deployment/api", counters="refuse"))
    negotiate(store, policies, "p-inverse", "a-inverse")
    approvals.answer(store, "a-inverse", ALICE, "grant", via="mcp", now=LATER, reason="agreed")
    store.propose(proposal("p-expiry", "delete", "configmap/settings"))
    negotiate(store, policies, "p-expiry", "a-expiry")
    late = store.approval("a-expiry").expires_at + timedelta(seconds=1)
    store.expire(now=late)
    store.claim("a-inverse", waiter="cluster-operator")
    ids = ("p-downscale", "p-inverse", "p-expiry")
    return {
        "records": [store.get(each) for each in ids],
        "list": store.list(),
        "approvals": store.approvals(),
        "audit": store.audit(),
        "head": store.audit_head(),
        "targets": [store.target(parse_target(t, namespace="shop")) for t in ("deployment/web",)],
    }


def test_sqlite_and_kubernetes_hold_identical_records(
    policies: PolicySet, sandbox: Sandbox, tmp_path: Path
) -> None:
    sqlite = SqliteStore(tmp_path / "store.sqlite")
    kube = KubernetesStore(kubeconfig=sandbox.kubeconfig)
    try:
        expected, got = play(sqlite, policies), play(kube, policies)
    finally:
        sqlite.close()
        kube.close()
    downscale, inverse, expiry = (record.decision for record in got["records"])
    assert downscale is not None and downscale.describe().startswith("approved as countered (3)")
    assert inverse is not None and inverse.outcome == "approved" and inverse.decided_by == ALICE
    assert expiry is not None and expiry.outcome == "rejected"
    assert [(r.id, r.state) for r in got["approvals"]] == [
        ("a-expiry", "expired"),  # requested at the same time: by id
        ("a-inverse", "granted"),
    ]
    assert audit.verify(got["audit"], got["head"]) == []
    for part in expected:
        assert got[part] == expected[part], part
    assert [r.hash for r in got["audit"]] == [r.hash for r in expected["audit"]]
