"""The issue's downscale conflict, negotiated through the SQLite store with the default policies.

The Cluster Operator proposes web in the shop from 5 to 1 replicas; the Dev Team counters with 3
citing its CapacityPolicy; reliability outranks cost, so the store approves as countered. When
the proposer refuses counters, a person (the shop's admins) decides instead. The transcript is
read back from the store and through `kubecrew proposals show`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from core.errors import Conflict, NotFound
from core.policy.actions import Action, ReplicaChange, parse_target
from core.policy.catalog import PolicySet
from core.policy.negotiation import negotiate
from core.policy.proposals import Identity
from core.policy.store.sqlite import SqliteStore
from tests.support.policies import NOON, defaults, downscale

KUBECREW = str(Path(sys.executable).parent / "kubecrew")
OPERATOR = Identity(kind="agent", name="cluster-operator")
MIN_REPLICAS = "CapacityPolicy shop-min-capacity / rule min-replicas"
FRACTION = "ChangePolicy shop-changes / rule max-replica-change-fraction"


@pytest.fixture(scope="module")
def policies() -> PolicySet:
    return defaults()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    opened = SqliteStore(tmp_path / "store.sqlite")
    yield opened
    opened.close()


def test_five_to_one_is_approved_as_countered_with_three(
    store: SqliteStore, policies: PolicySet
) -> None:
    proposal = downscale(1)
    store.propose(proposal)
    record = negotiate(store, policies, proposal.id, now=NOON)
    decision = record.decision
    assert decision is not None and decision.outcome == "approved-as-countered"
    assert decision.action.replicas == ReplicaChange(from_=5, to=3)
    assert decision.describe().startswith("approved as countered (3): scale Deployment shop/web")
    assert decision.rounds == 2
    assert "round 1: reliability outranks cost, which supports it" in decision.reasons
    assert record.proposal.state == "decided"
    kinds = [event.kind for event in record.transcript]
    assert kinds == ["proposed", "evaluated", "evaluated", "evaluated", "decided"]
    assert [event.seq for event in record.transcript] == [0, 1, 2, 3, 4]
    first = record.transcript[1].evaluation
    assert first is not None and (first.stakeholder, first.agent) == ("shop", "dev-team")
    assert first.verdict == "counter" and MIN_REPLICAS in [str(c) for c in first.citations]
    assert first.counter is not None and first.counter.replicas == ReplicaChange(from_=5, to=3)
    answers = [e.evaluation for e in record.transcript[2:4]]
    assert [(a.stakeholder, a.round, a.verdict) for a in answers if a] == [
        ("proposer", 1, "accept"),
        ("shop", 2, "accept"),
    ]
    assert store.target(proposal.action.target).proposal == proposal.id
    assert store.get(proposal.id) == record  # what the store holds, read back whole


def test_a_refused_counter_escalates_to_the_owners_people(
    store: SqliteStore, policies: PolicySet
) -> None:
    proposal = downscale(1, counters="refuse")
    store.propose(proposal)
    record = negotiate(store, policies, proposal.id, now=NOON)
    decision = record.decision
    assert decision is not None and decision.outcome == "escalated"
    assert decision.escalate_to is not None and decision.escalate_to.groups == ["shop-admins"]
    assert decision.escalate_to.agents == ["platform"]  # the org's arbiter may answer too
    assert decision.action == proposal.action  # nothing agreed: the person sees the original
    assert decision.reasons[-2] == "the proposer takes no counter-offer: a person decides"
    assert "the arbiter agent platform may answer" in decision.reasons[-1]
    assert record.proposal.state == "escalated"
    refusal = record.transcript[-3].evaluation
    assert refusal is not None and (refusal.stakeholder, refusal.verdict) == ("proposer", "reject")
    assert store.target(proposal.action.target).version == 0  # nothing approved
    assert [p.id for p in store.list(state="escalated")] == [proposal.id]
    (request,) = store.approvals(state="pending")
    assert (request.proposal, request.approvers, request.min_approvals) == (
        proposal.id,
        decision.escalate_to,
        1,
    )
    assert request.expires_at == NOON + timedelta(hours=24)  # no rule names an expiry: a day
    assert record.transcript[-1].kind == "approval-requested"
    assert record.transcript[-1].note == (
        f"approval {request.id} requested from group shop-admins, agent platform (1 needed), "
        "until 2026-12-03T11:00:00+00:00"
    )


def test_a_decided_proposal_is_never_decided_again(store: SqliteStore, policies: PolicySet) -> None:
    proposal = downscale(3)
    store.propose(proposal)
    first = negotiate(store, policies, proposal.id, now=NOON)
    assert first.decision is not None and first.decision.outcome == "approved"
    assert negotiate(store, policies, proposal.id, now=NOON) == first
    with pytest.raises(Conflict, match="already decided"):
        store.decide(proposal.id, version=first.version, events=[], decision=first.decision)
    assert store.get(proposal.id) == first


def test_a_later_proposal_on_the_same_target_sees_the_first_decision(
    store: SqliteStore, policies: PolicySet
) -> None:
    earlier, later = downscale(3), downscale(4)
    store.propose(earlier)
    store.propose(later)
    assert negotiate(store, policies, earlier.id, now=NOON).decision is not None
    record = negotiate(store, policies, later.id, now=NOON)
    assert record.decision is not None and record.decision.outcome == "rejected"
    assert record.decision.reasons == [
        f"superseded: Deployment shop/web was approved for proposal {earlier.id} after this "
        f"one was made; propose again from its new state"
    ]
    fresh = downscale(4)
    assert store.propose(fresh).proposal.basis == 1
    approved = negotiate(store, policies, fresh.id, now=NOON).decision
    assert approved is not None and approved.outcome == "approved"


def test_a_proposal_past_its_deadline_is_rejected(store: SqliteStore, policies: PolicySet) -> None:
    proposal = downscale(3, deadline=NOON.replace(hour=10))
    store.propose(proposal)
    decision = negotiate(store, policies, proposal.id, now=NOON).decision
    assert decision is not None and decision.outcome == "rejected"
    assert decision.reasons[0].startswith("the deadline 2026-12-02T10:00:00+00:00 passed")


def test_an_unknown_proposal_says_how_to_list_them(store: SqliteStore) -> None:
    with pytest.raises(NotFound, match="`kubecrew proposals list` shows them"):
        store.get("p-missing")


def kubecrew(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KUBECREW, "proposals", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "KUBECREW_HOME": str(home)},
    )


def test_the_cli_lists_and_shows_the_transcript(tmp_path: Path, policies: PolicySet) -> None:
    store = SqliteStore(tmp_path / "policy" / "store.sqlite")  # where $KUBECREW_HOME puts it
    proposal = downscale(1)
    store.propose(proposal)
    negotiate(store, policies, proposal.id, now=NOON)
    store.close()
    listed = kubecrew("list", home=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.split()[:3] == [proposal.id, "decided", "2026-12-02"]
    shown = kubecrew("show", proposal.id, home=tmp_path)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[:6] == [
        f"proposal {proposal.id} (decided)",
        "  by        agent cluster-operator",
        "  action    scale Deployment shop/web 5 -> 1 replicas directly",
        "  rationale web has used under 10% CPU for an hour",
        "  savings   120 per month, risk low",
        "transcript:",
    ]
    steps = [line for line in lines if re.match(r" +\d+\. ", line)]
    assert [line.split(": ", 1)[1] for line in steps] == [
        "proposes scale Deployment shop/web 5 -> 1 replicas directly: web has used under 10% "
        "CPU for an hour",
        "round 1: shop (dev-team) counters with scale Deployment shop/web 5 -> 3 replicas "
        f"directly; cites {MIN_REPLICAS}; cites {FRACTION}",
        "round 1: proposer (cluster-operator) accepts with scale Deployment shop/web 5 -> 3 "
        "replicas directly",
        "round 2: shop (dev-team) accepts",
        "decision: approved as countered (3): scale Deployment shop/web 5 -> 3 replicas "
        "directly after 2 round(s)",
    ]
    assert "      round 1: reliability outranks cost, which supports it" in lines
    missing = kubecrew(
        "show",
        "p-missing",
        "--store",
        str(tmp_path / "policy" / "store.sqlite"),
        home=tmp_path / "elsewhere",
    )
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
    assert "no proposal p-missing in" in missing.stderr
    empty = kubecrew("list", home=tmp_path / "elsewhere")
    assert empty.returncode == 1 and "nothing was proposed there yet" in empty.stderr


def test_an_action_needing_approval_escalates_to_its_approvers(
    store: SqliteStore, policies: PolicySet
) -> None:
    deletion = Action(type="delete", target=parse_target("configmap/settings", namespace="shop"))
    proposal = downscale(3).model_copy(update={"action": deletion})
    store.propose(proposal)
    decision = negotiate(store, policies, proposal.id, now=NOON).decision
    assert decision is not None and decision.outcome == "escalated"
    assert decision.escalate_to is not None and decision.escalate_to.groups == ["shop-admins"]
    assert decision.reasons[-1] == (
        "ChangePolicy shop-changes / rule deletes needs approval by group shop-admins"
    )
    (request,) = store.approvals()
    assert request.expires_at == NOON + timedelta(hours=8)  # the rule's expiresAfter
    assert request.action == deletion and request.state == "pending"
