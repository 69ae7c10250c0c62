"""The `Store` contract (store/base.py), run on both backends: SQLite and the Kubernetes API.

Every test gets a fresh store: a SQLite file in tmp_path, or the custom resources of a fresh
sandbox (which the store installs its CRDs into). `opener` opens more handles on the same store,
as other agents' processes would. Escalations come from the default policies: a delete in the
shop needs the shop-admins, a refused counter goes to the owning team.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
import yaml

from core.errors import Conflict, InvalidArgument, NotFound
from core.policy import approvals, audit
from core.policy.actions import Action, ReplicaChange, parse_target
from core.policy.audit import AuditEntry
from core.policy.catalog import PolicySet
from core.policy.loading import load
from core.policy.negotiation import deliberate, negotiate, new_proposal_id
from core.policy.proposals import ApprovalRequest, Identity, Proposal
from core.policy.store.base import Store
from core.policy.store.kube_crds import definitions
from core.policy.store.kubernetes import KubernetesStore
from core.policy.store.sqlite import SqliteStore
from sandbox.server import Sandbox
from tests.support.policies import NOON, POLICIES, defaults

OPERATOR = Identity(kind="agent", name="cluster-operator")
ALICE = Identity(kind="person", name="alice", groups=("shop-admins",))
APPROVED = ("approved", "approved-as-countered")
DEPLOY = Path(__file__).parents[3] / "deploy"

TWO_PEOPLE = """
apiVersion: kubecrew.io/v1alpha1
kind: ChangePolicy
metadata: {name: restarts, labels: {kubecrew.io/team: shop}}
spec:
  selector: {namespaces: [shop]}
  approvals:
    - name: restarts
      actions: [restart]
      approvers: {users: [alice, bob]}
      minApprovals: 2
"""

Opener = Callable[[], Store]


@pytest.fixture(scope="module")
def policies() -> PolicySet:
    return defaults()


@pytest.fixture(params=["sqlite", "kubernetes"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    opened: list[Store] = []

    def open_one() -> Store:
        if request.param == "sqlite":
            store: Store = SqliteStore(tmp_path / "store.sqlite")
        else:
            sandbox: Sandbox = request.getfixturevalue("sandbox")
            store = KubernetesStore(kubeconfig=sandbox.kubeconfig)
        if threading.current_thread() is threading.main_thread():
            opened.append(store)  # others are closed by the thread that opened them
        return store

    yield open_one
    for store in opened:
        store.close()


@pytest.fixture
def store(opener: Opener) -> Store:
    return opener()


def proposal(action: str = "scale", to: int = 3, **fields: object) -> Proposal:
    """An action on web in the shop, or a delete of its settings (which needs a person)."""
    scaling = action == "scale"
    replicas = ReplicaChange(from_=5, to=to) if scaling else None
    target = "configmap/settings" if action == "delete" else "deployment/web"
    return Proposal.model_validate(
        {
            "id": new_proposal_id(),
            "proposer": OPERATOR,
            "action": Action(
                type=action,  # type: ignore[arg-type]
                target=parse_target(target, namespace="shop"),
                replicas=replicas,
            ),
            "rationale": "underused",
            "created": NOON,
            "metrics": {"cpu_utilization": 0.1},
            **fields,
        }
    )


def escalated(store: Store, policies: PolicySet) -> ApprovalRequest:
    made = proposal("delete")
    store.propose(made)
    negotiate(store, policies, made.id, now=NOON)
    (request,) = [r for r in store.approvals() if r.proposal == made.id]
    return request


def intact(store: Store) -> list[str]:
    return audit.verify(store.audit(), store.audit_head())


# --- proposals ------------------------------------------------------------------------------


def test_propose_get_list_and_target(store: Store) -> None:
    first, second = proposal(to=3), proposal(to=4)
    made = store.propose(first)
    store.propose(second)
    assert made.version == 1 and made.proposal.basis == 0 and made.proposal.state == "open"
    assert [event.kind for event in made.transcript] == ["proposed"]
    assert store.get(first.id) == made
    assert {p.id for p in store.list()} == {first.id, second.id}
    assert store.list(state="decided") == []
    assert store.target(first.action.target).version == 0
    with pytest.raises(Conflict, match="already exists"):
        store.propose(first)
    with pytest.raises(NotFound, match="kubecrew proposals list"):
        store.get("p-missing")


def test_decide_refuses_a_stale_version_and_decides_once(store: Store, policies: PolicySet) -> None:
    made = store.propose(proposal(to=3))
    outcome = deliberate(
        made.proposal, policies, store.target(made.proposal.action.target), now=NOON
    )
    events = outcome.events(after=1)
    with pytest.raises(Conflict, match="re-read"):
        store.decide(made.proposal.id, version=7, events=events, decision=outcome.decision)
    assert store.get(made.proposal.id).decision is None  # the refused write changed nothing
    decided = store.decide(made.proposal.id, version=1, events=events, decision=outcome.decision)
    assert decided.version == 2 and decided.decision == outcome.decision
    assert store.target(made.proposal.action.target).version == 1
    with pytest.raises(Conflict, match="already decided"):
        store.decide(made.proposal.id, version=2, events=events, decision=outcome.decision)
    assert [e.kind for e in store.get(made.proposal.id).transcript].count("decided") == 1


def test_an_approval_on_a_moved_target_is_refused(store: Store, policies: PolicySet) -> None:
    early, late = store.propose(proposal(to=3)), store.propose(proposal(to=4))
    target = store.target(early.proposal.action.target)
    stale = deliberate(late.proposal, policies, target, now=NOON)
    assert negotiate(store, policies, early.proposal.id, now=NOON).decision is not None
    with pytest.raises(Conflict, match="has been decided by proposal"):
        store.decide(
            late.proposal.id, version=1, events=stale.events(after=1), decision=stale.decision
        )
    after = negotiate(store, policies, late.proposal.id, now=NOON).decision
    assert after is not None and after.outcome == "rejected" and "superseded" in after.reasons[0]


def test_an_escalation_needs_its_request_and_only_it(store: Store, policies: PolicySet) -> None:
    made = store.propose(proposal("delete"))
    outcome = deliberate(
        made.proposal, policies, store.target(made.proposal.action.target), now=NOON
    )
    assert outcome.decision.outcome == "escalated" and outcome.approval is not None
    with pytest.raises(InvalidArgument, match="approval request"):
        store.decide(made.proposal.id, version=1, events=[], decision=outcome.decision)
    store.decide(
        made.proposal.id,
        version=1,
        events=outcome.events(after=1),
        decision=outcome.decision,
        approval=outcome.approval,
    )
    assert store.approval(outcome.approval.id) == outcome.approval
    assert store.approvals(state="pending") == [outcome.approval]
    assert store.get(made.proposal.id).proposal.state == "escalated"


def test_racing_agents_never_approve_two_conflicting_proposals(
    opener: Opener, policies: PolicySet
) -> None:
    first = opener()
    made = [first.propose(proposal(to=to)) for to in (3, 4, 3, 4)]
    barrier = threading.Barrier(len(made))
    failures: list[BaseException] = []

    def agent(proposal_id: str) -> None:
        own = opener()
        barrier.wait()
        try:
            negotiate(own, policies, proposal_id, now=NOON, attempts=20)
        except BaseException as exc:  # reported below, with the thread's error
            failures.append(exc)
        finally:
            own.close()

    threads = [threading.Thread(target=agent, args=(m.proposal.id,)) for m in made]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert failures == []
    decisions = [first.get(m.proposal.id).decision for m in made]
    assert all(d is not None for d in decisions)
    approved = [d for d in decisions if d is not None and d.outcome in APPROVED]
    assert len(approved) == 1
    assert first.target(made[0].proposal.action.target).version == 1
    assert intact(first) == []


# --- approvals ------------------------------------------------------------------------------


def test_a_grant_ends_the_request_and_approves_once(store: Store, policies: PolicySet) -> None:
    request = escalated(store, policies)
    assert request.approvers.groups == ["shop-admins"] and request.state == "pending"
    later = NOON + timedelta(minutes=5)
    granted = approvals.answer(store, request.id, ALICE, "grant", via="cli", now=later)
    assert granted.state == "granted" and [a.by for a in granted.answers] == [ALICE]
    record = store.get(request.proposal)
    assert record.proposal.state == "decided" and record.decision is not None
    assert record.decision.outcome == "approved" and record.decision.decided_by == ALICE
    assert [e.kind for e in record.transcript][-2:] == ["answered", "decided"]
    with pytest.raises(Conflict, match="already granted"):
        store.answer(request.id, granted.answers[0], now=later)
    assert store.target(request.action.target).version == 1


def test_a_deny_rejects_and_an_expiry_rejects(store: Store, policies: PolicySet) -> None:
    denied_request, expiring = escalated(store, policies), escalated(store, policies)
    denied = approvals.answer(store, denied_request.id, ALICE, "deny", via="slack", now=NOON)
    assert denied.state == "denied"
    decision = store.get(denied_request.proposal).decision
    assert decision is not None and decision.outcome == "rejected"
    assert store.expire(now=NOON) == []
    late = expiring.expires_at + timedelta(seconds=1)
    with pytest.raises(Conflict, match="expired"):
        approvals.answer(store, expiring.id, ALICE, "grant", via="mcp", now=late)
    assert store.approval(expiring.id).state == "expired"
    decision = store.get(expiring.proposal).decision
    assert decision is not None and decision.outcome == "rejected"
    assert decision.reasons[0].startswith("approval expired")
    assert store.expire(now=late) == []  # ended once


def test_expire_ends_every_late_request_once(store: Store, policies: PolicySet) -> None:
    requests = [escalated(store, policies) for _ in range(2)]
    late = max(r.expires_at for r in requests) + timedelta(seconds=1)
    ended = store.expire(now=late)
    assert sorted(r.id for r in ended) == sorted(r.id for r in requests)
    assert {r.state for r in ended} == {"expired"}
    assert store.expire(now=late) == [] and store.approvals(state="pending") == []


def test_an_ended_request_is_claimed_once(store: Store, policies: PolicySet) -> None:
    request = escalated(store, policies)
    with pytest.raises(Conflict, match="still pending"):
        store.claim(request.id, waiter="one")
    approvals.answer(store, request.id, ALICE, "grant", via="cli", now=NOON)
    claimed = store.claim(request.id, waiter="one")
    assert claimed is not None and claimed.claimed_by == "one" and claimed.state == "granted"
    assert store.claim(request.id, waiter="two") is None
    assert store.approval(request.id).claimed_by == "one"
    with pytest.raises(NotFound, match="kubecrew approvals list"):
        store.approval("a-missing")


def test_two_grants_are_needed_when_the_rule_says_two(store: Store, tmp_path: Path) -> None:
    rule = tmp_path / "restarts.yaml"
    rule.write_text(TWO_PEOPLE)
    policies = load([POLICIES, rule])
    made = proposal("restart")
    store.propose(made)
    negotiate(store, policies, made.id, now=NOON)
    (request,) = store.approvals()
    alice, bob = (Identity(kind="person", name=name) for name in ("alice", "bob"))
    first = approvals.answer(store, request.id, alice, "grant", via="cli", now=NOON)
    assert first.state == "pending" and store.get(made.id).proposal.state == "escalated"
    assert store.approval(request.id) == first
    second = approvals.answer(store, request.id, bob, "grant", via="slack", now=NOON)
    assert second.state == "granted" and [a.by for a in second.answers] == [alice, bob]
    record = store.get(made.id)
    assert record.decision is not None and record.decision.decided_by == bob
    assert [e.kind for e in record.transcript][-3:] == ["answered", "answered", "decided"]
    assert intact(store) == []


# --- audit ----------------------------------------------------------------------------------


def test_every_write_appends_its_audit_records(store: Store, policies: PolicySet) -> None:
    request = escalated(store, policies)
    approvals.answer(store, request.id, ALICE, "grant", via="mcp", now=NOON)
    kinds = [r.kind for r in store.audit()]
    assert kinds[0] == "proposal" and kinds[-2:] == ["answer", "decision"]
    assert kinds.count("decision") == 2 and kinds.count("approval") == 1
    assert "evaluation" in kinds
    mutation = AuditEntry(
        at=NOON, actor=str(OPERATOR), kind="mutation", subject=request.proposal, summary="deleted"
    )
    (recorded,) = store.record([mutation])
    assert recorded.seq == len(kinds) + 1 and store.audit_head().hash == recorded.hash
    assert intact(store) == []


def test_audit_filters(store: Store, policies: PolicySet) -> None:
    request = escalated(store, policies)
    everything = store.audit()
    assert store.audit(after=2) == everything[2:]
    assert store.audit(limit=2) == everything[:2]
    assert store.audit(after=1, limit=1) == everything[1:2]
    assert [r.subject for r in store.audit(subject=request.id)] == [request.id]
    decisions = store.audit(kind="decision")
    assert [r.kind for r in decisions] == ["decision"]
    assert store.audit(subject=request.proposal, kind="proposal")[0].seq == 1


# --- the Kubernetes backend's own files -----------------------------------------------------


def test_the_shipped_crds_are_the_ones_the_store_installs() -> None:
    shipped = list(yaml.safe_load_all((DEPLOY / "crds" / "policy-store.yaml").read_text()))
    assert [doc for doc in shipped if doc] == definitions()
