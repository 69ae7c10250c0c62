"""The org's arbiter: escalations org policy can settle name the Platform agent beside the people.

A refused counter, counters that never converge and a rule that cannot be evaluated escalate
with the owners' people plus `agent platform` (the PriorityPolicy's arbiter); a ChangePolicy
approval rule's request names only the people it asked for, unless the rule itself names the
agent. `arbiter: null` leaves every escalation to people. Only a named agent may answer: the
Cluster Operator is refused where the Platform is taken, and a person still can. The policy
server lists `answer_approval` for the arbiter and not for other agents.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp.shared.memory import create_connected_server_and_client_session

from core.errors import PermissionDenied
from core.policy import approvals
from core.policy.actions import Action, parse_target
from core.policy.catalog import PolicySet
from core.policy.documents.common import Principals
from core.policy.loading import load
from core.policy.negotiation import negotiate
from core.policy.proposals import ApprovalRequest, Identity, Proposal
from core.policy.settings import PolicySettings
from core.policy.store.sqlite import SqliteStore
from mcp_servers.policy.server import build
from tests.support.policies import NOON, POLICIES, downscale

PLATFORM = Identity(kind="agent", name="platform")
OPERATOR = Identity(kind="agent", name="cluster-operator")
ALICE = Identity(kind="person", name="alice", groups=("shop-admins",))
PRIORITY = """\
apiVersion: kubecrew.io/v1alpha1
kind: PriorityPolicy
metadata: {name: org-priorities}
spec:
  order: [security, reliability, cost]
  tieBreaks: [owner, most-conservative]
  arbiter: %s
"""
# An approval rule the org delegates to the Platform by name, and a rule that cannot be
# evaluated without the live object (the proposal carries none).
DELEGATED = """\
apiVersion: kubecrew.io/v1alpha1
kind: ChangePolicy
metadata: {name: config-changes}
spec:
  selector: {namespaces: [shop], kinds: [ConfigMap]}
  approvals:
    - name: config-restarts
      actions: [restart]
      approvers: {agents: [platform]}
---
apiVersion: kubecrew.io/v1alpha1
kind: ChangePolicy
metadata: {name: tiered-patches}
spec:
  selector: {namespaces: [shop], kinds: [Deployment]}
  rules:
    - name: tier-known
      actions: [patch]
      when: 'target.metadata.labels["tier"] == "frozen"'
"""


def policies_with(tmp_path: Path, arbiter: str) -> PolicySet:
    """The default policies, with this arbiter and the two ChangePolicies above."""
    root = tmp_path / "policies"
    shutil.copytree(POLICIES, root, ignore=shutil.ignore_patterns("*.md"))
    (root / "priority.yaml").write_text(PRIORITY % arbiter)
    (root / "delegated.yaml").write_text(DELEGATED)
    return load([root])


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    opened = SqliteStore(tmp_path / "store.sqlite")
    yield opened
    opened.close()


def escalated(store: SqliteStore, policies: PolicySet, made: Proposal) -> ApprovalRequest:
    store.propose(made)
    decision = negotiate(store, policies, made.id, now=NOON).decision
    assert decision is not None and decision.outcome == "escalated", decision
    (request,) = [r for r in store.approvals() if r.proposal == made.id]
    return request


def action(kind: str, target: str) -> Action:
    return Action.model_validate({"type": kind, "target": parse_target(target, namespace="shop")})


def test_a_refused_counter_names_the_arbiter_beside_the_owners(
    store: SqliteStore, tmp_path: Path
) -> None:
    policies = policies_with(tmp_path, "platform")
    request = escalated(store, policies, downscale(1, counters="refuse"))
    assert request.cause == "counter-refused"
    assert request.approvers == Principals(groups=["shop-admins"], agents=["platform"])
    assert request.approvers.describe() == "group shop-admins, agent platform"
    assert request.approvers.people() == "group shop-admins"  # whom a person is told to ask
    assert request.approvers.agents_settle() == (
        "the Platform agent may also settle it under org policy"
    )
    assert request.min_approvals == 1
    assert any("the arbiter agent platform may answer" in r for r in request.reasons)
    told = store.get(request.proposal).transcript[-1].note
    assert "requested from group shop-admins, agent platform" in told


def test_an_approval_rule_asks_only_for_its_people(store: SqliteStore, tmp_path: Path) -> None:
    policies = policies_with(tmp_path, "platform")
    made = downscale(1).model_copy(update={"action": action("delete", "configmap/settings")})
    request = escalated(store, policies, made)
    assert request.cause == "approval-rule"
    assert request.approvers == Principals(groups=["shop-admins"])
    assert not any("arbiter" in r for r in request.reasons)
    with pytest.raises(PermissionDenied, match="it needs group shop-admins"):
        approvals.answer(store, request.id, PLATFORM, "deny", via="mcp", now=NOON)


def test_an_unevaluable_rule_escalates_to_people_and_the_arbiter(
    store: SqliteStore, tmp_path: Path
) -> None:
    policies = policies_with(tmp_path, "platform")
    made = downscale(1).model_copy(update={"action": action("patch", "deployment/web")})
    request = escalated(store, policies, made)
    assert request.cause == "unevaluable"
    assert request.approvers.agents == ["platform"]


def test_without_an_arbiter_every_escalation_goes_to_people(
    store: SqliteStore, tmp_path: Path
) -> None:
    policies = policies_with(tmp_path, "null")
    request = escalated(store, policies, downscale(1, counters="refuse"))
    assert request.approvers == Principals(groups=["shop-admins"])
    assert not any("arbiter" in r for r in request.reasons)
    with pytest.raises(PermissionDenied, match=f"agent platform may not answer {request.id}"):
        approvals.answer(store, request.id, PLATFORM, "deny", via="mcp", now=NOON)


def test_only_a_named_agent_answers_and_its_deny_rejects(
    store: SqliteStore, tmp_path: Path
) -> None:
    policies = policies_with(tmp_path, "platform")
    request = escalated(store, policies, downscale(1, counters="refuse"))
    with pytest.raises(PermissionDenied, match="agent cluster-operator may not answer"):
        approvals.answer(store, request.id, OPERATOR, "grant", via="mcp", now=NOON)
    ended = approvals.answer(
        store, request.id, PLATFORM, "deny", via="mcp", now=NOON, reason="propose scale to 3"
    )
    assert ended.state == "denied"
    decision = store.get(request.proposal).decision
    assert decision is not None and (decision.outcome, decision.decided_by) == (
        "rejected",
        PLATFORM,
    )
    assert decision.reasons == ["denied by agent platform via mcp: propose scale to 3"]


def test_a_person_still_answers_an_arbitrable_request(store: SqliteStore, tmp_path: Path) -> None:
    policies = policies_with(tmp_path, "platform")
    request = escalated(store, policies, downscale(1, counters="refuse"))
    ended = approvals.answer(store, request.id, ALICE, "grant", via="cli", now=NOON)
    assert ended.state == "granted"
    decision = store.get(request.proposal).decision
    assert decision is not None and decision.decided_by == ALICE


def test_an_approval_rule_may_delegate_to_the_platform_by_name(
    store: SqliteStore, tmp_path: Path
) -> None:
    policies = policies_with(tmp_path, "null")
    made = downscale(1).model_copy(update={"action": action("restart", "configmap/settings")})
    request = escalated(store, policies, made)
    assert (request.cause, request.approvers) == ("approval-rule", Principals(agents=["platform"]))
    assert request.approvers.people() == ""
    assert (
        request.approvers.agents_settle() == "only the Platform agent settles it, under org policy"
    )
    with pytest.raises(
        PermissionDenied, match="only the Platform agent settles it, under org policy"
    ):
        approvals.answer(store, request.id, ALICE, "grant", via="cli", now=NOON)
    assert approvals.answer(store, request.id, PLATFORM, "grant", via="mcp", now=NOON).ended


def tools_of(tmp_path: Path, agent: str) -> set[str]:
    policies_with(tmp_path, "platform")
    settings = PolicySettings(
        policies=(tmp_path / "policies",), store=str(tmp_path / "store.sqlite"), agent=agent
    )

    async def go() -> set[str]:
        async with create_connected_server_and_client_session(build(settings)) as session:
            return {tool.name for tool in (await session.list_tools()).tools}

    return anyio.run(go)


@pytest.mark.parametrize(
    ("agent", "answers"),
    [("platform", True), ("cluster-operator", False)],
    ids=["arbiter", "other-agent"],
)
def test_the_server_lists_answer_approval_for_the_arbiter_only(
    tmp_path: Path, agent: str, answers: bool
) -> None:
    assert ("answer_approval" in tools_of(tmp_path, agent)) is answers
