"""Durable approvals through the SQLite store: who may answer, how a request ends, expiry, waiting.

Each test escalates a real proposal with the default policies (a delete in the shop needs the
shop-admins, for 8h; a refused counter goes to the owners, for a day), then answers it as people
would, and reads back the request, the proposal's final decision and its transcript.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from core.errors import Conflict, InvalidArgument, PermissionDenied
from core.policy import approvals
from core.policy.actions import Action, ReplicaChange, parse_target
from core.policy.catalog import PolicySet
from core.policy.loading import load
from core.policy.negotiation import negotiate, new_proposal_id
from core.policy.proposals import ApprovalRequest, Decision, Identity, Proposal
from core.policy.store.sqlite import SqliteStore
from tests.support.policies import NOON, POLICIES, defaults

OPERATOR = Identity(kind="agent", name="cluster-operator")
ALICE = Identity(kind="person", name="alice", groups=("shop-admins",))
BOB = Identity(kind="person", name="bob", groups=("shop-admins",))
MALLORY = Identity(kind="person", name="mallory", groups=("developers",))
TWO_PEOPLE = """
apiVersion: kubecrew.io/v1alpha1
kind: ChangePolicy
metadata: {name: restarts, labels: {kubecrew.io/team: shop}}
spec:
  selector: {namespaces: [shop]}
  approvals:
    - name: restarts
      actions: [restart]
      approvers: {users: [alice, bob, carol]}
      minApprovals: 2
      expiresAfter: 30m
"""


@pytest.fixture(scope="module")
def policies() -> PolicySet:
    return defaults()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    opened = SqliteStore(tmp_path / "store.sqlite")
    yield opened
    opened.close()


def proposal(action: str, target: str, **fields: object) -> Proposal:
    return Proposal.model_validate(
        {
            "id": new_proposal_id(),
            "proposer": OPERATOR,
            "action": Action.model_validate(
                {"type": action, "target": parse_target(target, namespace="shop"), **fields}
            ),
            "rationale": "tidy up",
            "created": NOON,
            "metrics": {"cpu_utilization": 0.1},
        }
    )


def escalate(store: SqliteStore, policies: PolicySet, made: Proposal) -> ApprovalRequest:
    store.propose(made)
    decision = negotiate(store, policies, made.id, now=NOON).decision
    assert decision is not None and decision.outcome == "escalated"
    (request,) = [r for r in store.approvals() if r.proposal == made.id]
    return request


def final(store: SqliteStore, request: ApprovalRequest) -> Decision:
    record = store.get(request.proposal)
    assert record.proposal.state == "decided" and record.decision is not None
    return record.decision


def test_a_grant_approves_the_proposal_as_the_person_who_granted(
    store: SqliteStore, policies: PolicySet
) -> None:
    request = escalate(store, policies, proposal("delete", "configmap/settings"))
    assert (request.state, request.expires_at) == ("pending", NOON + timedelta(hours=8))
    later = NOON + timedelta(minutes=5)
    ended = approvals.answer(store, request.id, ALICE, "grant", via="cli", now=later, reason="ok")
    assert ended.state == "granted" and [a.by.name for a in ended.answers] == ["alice"]
    decision = final(store, request)
    assert (decision.outcome, decision.decided_by, decision.at) == ("approved", ALICE, later)
    assert decision.action == request.action
    assert decision.reasons == ["granted by person alice via cli: ok"]
    assert store.target(request.action.target).proposal == request.proposal
    transcript = store.get(request.proposal).transcript
    assert [e.kind for e in transcript[-4:]] == [
        "decided",
        "approval-requested",
        "answered",
        "decided",
    ]
    assert transcript[-2].note == f"granted by person alice via cli: ok on {request.id} (granted)"
    assert store.approval(request.id) == ended


def test_a_deny_rejects_the_proposal_at_once(store: SqliteStore, policies: PolicySet) -> None:
    request = escalate(store, policies, proposal("delete", "configmap/settings"))
    ended = approvals.answer(store, request.id, BOB, "deny", via="slack", now=NOON, reason="no")
    assert ended.state == "denied"
    decision = final(store, request)
    assert (decision.outcome, decision.decided_by) == ("rejected", BOB)
    assert decision.reasons == ["denied by person bob via slack: no"]
    assert store.target(request.action.target).version == 0
    with pytest.raises(Conflict, match=f"{request.id} is already denied"):
        approvals.answer(store, request.id, ALICE, "grant", via="cli", now=NOON)


def test_two_approvals_needed_means_two_different_people(tmp_path: Path) -> None:
    (tmp_path / "restarts.yaml").write_text(TWO_PEOPLE)
    policies = load([POLICIES, tmp_path / "restarts.yaml"])
    store = SqliteStore(tmp_path / "store.sqlite")
    alice, bob = (Identity(kind="person", name=name) for name in ("alice", "bob"))
    request = escalate(store, policies, proposal("restart", "deployment/web"))
    assert (request.min_approvals, request.expires_at) == (2, NOON + timedelta(minutes=30))
    first = approvals.answer(store, request.id, alice, "grant", via="cli", now=NOON)
    assert first.state == "pending" and store.get(request.proposal).proposal.state == "escalated"
    with pytest.raises(Conflict, match="person alice already answered"):
        approvals.answer(store, request.id, alice, "grant", via="mcp", now=NOON)
    second = approvals.answer(store, request.id, bob, "grant", via="mcp", now=NOON)
    assert second.state == "granted" and len(second.answers) == 2
    decision = final(store, request)
    assert (decision.outcome, decision.decided_by) == ("approved", bob)
    assert decision.reasons == ["granted by person alice via cli", "granted by person bob via mcp"]
    store.close()


def test_someone_the_policy_does_not_name_is_refused(
    store: SqliteStore, policies: PolicySet
) -> None:
    request = escalate(store, policies, proposal("delete", "configmap/settings"))
    with pytest.raises(PermissionDenied, match="it needs group shop-admins"):
        approvals.answer(store, request.id, MALLORY, "grant", via="cli", now=NOON)
    agent = Identity(kind="agent", name="dev-team", groups=("shop-admins",))
    with pytest.raises(PermissionDenied, match="agent dev-team may not answer"):
        approvals.answer(store, request.id, agent, "grant", via="mcp", now=NOON)
    assert store.approval(request.id) == request  # nothing recorded


def test_an_answer_after_the_expiry_expires_the_request_instead(
    store: SqliteStore, policies: PolicySet
) -> None:
    request = escalate(store, policies, proposal("delete", "configmap/settings"))
    late = request.expires_at + timedelta(seconds=1)
    with pytest.raises(Conflict, match=f"{request.id} expired at 2026-12-02T19:00:00"):
        approvals.answer(store, request.id, ALICE, "grant", via="cli", now=late)
    expired = store.approval(request.id)
    assert expired.state == "expired" and expired.answers == []
    decision = final(store, request)
    assert decision.outcome == "rejected" and decision.reasons[0].startswith("approval expired")
    assert [e.kind for e in store.get(request.proposal).transcript[-2:]] == ["expired", "decided"]
    with pytest.raises(Conflict, match="expired"):
        approvals.answer(store, request.id, BOB, "grant", via="cli", now=NOON)


def test_expire_ends_only_the_requests_past_due(store: SqliteStore, policies: PolicySet) -> None:
    deletion = escalate(store, policies, proposal("delete", "configmap/settings"))  # 8h
    refused = proposal("scale", "deployment/web", replicas=ReplicaChange(from_=5, to=1))
    downscale = escalate(store, policies, refused.model_copy(update={"counters": "refuse"}))
    assert downscale.expires_at == NOON + timedelta(hours=24)  # no rule: a day
    assert store.expire(now=NOON + timedelta(hours=8)) == []  # due is not past due
    (ended,) = store.expire(now=NOON + timedelta(hours=9))
    assert (ended.id, ended.state) == (deletion.id, "expired")
    assert store.expire(now=NOON + timedelta(hours=9)) == []
    assert [r.id for r in store.approvals(state="pending")] == [downscale.id]


def test_a_grant_after_the_target_moved_on_is_superseded(
    store: SqliteStore, policies: PolicySet
) -> None:
    refused = proposal("scale", "deployment/web", replicas=ReplicaChange(from_=5, to=1))
    request = escalate(store, policies, refused.model_copy(update={"counters": "refuse"}))
    other = proposal("scale", "deployment/web", replicas=ReplicaChange(from_=5, to=3))
    store.propose(other)
    assert negotiate(store, policies, other.id, now=NOON).decision is not None
    ended = approvals.answer(store, request.id, ALICE, "grant", via="cli", now=NOON)
    assert ended.state == "granted"  # the person's answer stands ...
    decision = final(store, request)
    assert decision.outcome == "rejected"  # ... but the proposal lost its basis
    assert decision.reasons[-1].startswith(
        f"superseded: Deployment shop/web was approved for proposal {other.id}"
    )
    assert store.target(request.action.target).proposal == other.id


def test_an_escalation_without_its_request_is_refused(
    store: SqliteStore, policies: PolicySet
) -> None:
    made = proposal("delete", "configmap/settings")
    record = store.propose(made)
    escalated = Decision(
        outcome="escalated", action=made.action, reasons=[], rounds=1, decided_by=OPERATOR, at=NOON
    )
    with pytest.raises(InvalidArgument, match="comes with its approval request"):
        store.decide(made.id, version=record.version, events=[], decision=escalated)
    assert store.get(made.id).proposal.state == "open"


def test_exactly_one_of_two_waiters_takes_up_the_answer(
    store: SqliteStore, policies: PolicySet
) -> None:
    request = escalate(store, policies, proposal("delete", "configmap/settings"))
    outcomes: dict[str, object] = {}
    ready = threading.Barrier(3)

    def waiter(name: str) -> None:
        own = SqliteStore(store.path)  # a connection per thread, as per process
        ready.wait()
        try:
            outcomes[name] = approvals.wait(
                own, request.id, waiter=name, timeout=20, poll=0.02, now=lambda: NOON
            )
        except Conflict as exc:
            outcomes[name] = exc
        finally:
            own.close()

    threads = [threading.Thread(target=waiter, args=(name,)) for name in ("w1", "w2")]
    for thread in threads:
        thread.start()
    ready.wait()
    approvals.answer(store, request.id, ALICE, "grant", via="cli", now=NOON)
    for thread in threads:
        thread.join(timeout=30)
    taken = [v for v in outcomes.values() if isinstance(v, ApprovalRequest)]
    refused = [v for v in outcomes.values() if isinstance(v, Conflict)]
    assert len(taken) == 1 and len(refused) == 1, outcomes
    assert taken[0].state == "granted" and taken[0].claimed_by in ("w1", "w2")
    assert f"already taken up by {taken[0].claimed_by}" in refused[0].message
    assert store.claim(request.id, waiter="w3") is None


def test_a_waiter_times_out_on_a_pending_request(store: SqliteStore, policies: PolicySet) -> None:
    request = escalate(store, policies, proposal("delete", "configmap/settings"))

    def clock() -> datetime:
        return NOON

    assert approvals.wait(store, request.id, waiter="w", timeout=0.1, poll=0.02, now=clock) is None
    with pytest.raises(Conflict, match="still pending"):
        store.claim(request.id, waiter="w")
    # Past its expiry, waiting expires the request and hands the waiter that end.
    due = request.expires_at + timedelta(seconds=1)
    ended = approvals.wait(store, request.id, waiter="w", timeout=5, now=lambda: due)
    assert ended is not None and (ended.state, ended.claimed_by) == ("expired", "w")
