"""Actions, requests and proposals as the tests write them: short, with the demo shop's defaults.

`POLICIES` is the project's shipped policies/ and `defaults()` those documents loaded; `request`
and `check` evaluate one action against a policy set, `fired` reads which rules fired;
`downscale` is the issue's proposal (web in the shop from 5 replicas), and `escalated` plays its
inverse case into a store: the counter refused, so shop-admins must decide.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.policy.actions import Action, EvaluationRequest, ReplicaChange, parse_target
from core.policy.catalog import PolicySet
from core.policy.evaluation import evaluate
from core.policy.findings import EvaluationReport
from core.policy.loading import load
from core.policy.negotiation import negotiate, new_proposal_id
from core.policy.proposals import ApprovalRequest, Identity, Impact, Proposal
from core.policy.store.sqlite import SqliteStore

POLICIES = Path(__file__).parents[2] / "policies"
# A Wednesday noon in Paris: outside the node maintenance windows.
NOON = datetime(2026, 12, 2, 11, 0, tzinfo=UTC)


def defaults() -> PolicySet:
    return load([POLICIES])


def request(
    action: str,
    target: str,
    *,
    namespace: str | None = "shop",
    replicas: tuple[int | None, int] | None = None,
    metrics: dict[str, float] | None = None,
    now: datetime = NOON,
    live: dict[str, Any] | None = None,
    **fields: Any,
) -> EvaluationRequest:
    change = None if replicas is None else ReplicaChange(from_=replicas[0], to=replicas[1])
    return EvaluationRequest(
        action=Action.model_validate(
            {
                "type": action,
                "target": parse_target(target, namespace=namespace),
                "replicas": change,
                **fields,
            }
        ),
        target=live,
        metrics=metrics or {},
        now=now,
    )


def check(policies: PolicySet, *args: Any, **kwargs: Any) -> EvaluationReport:
    return evaluate(policies, request(*args, **kwargs))


def fired(report: EvaluationReport) -> dict[str, str]:
    """Citation -> effect, for every rule that fired."""
    return {str(finding.citation): finding.effect for finding in report.fired()}


def downscale(to: int = 1, *, proposer: str = "cluster-operator", **fields: Any) -> Proposal:
    """The issue's proposal: an agent scales web in the shop from 5 to `to` replicas to save cost,
    at NOON, with a new id; `fields` override any field (id, created, counters, ...)."""
    return Proposal.model_validate(
        {
            "id": new_proposal_id(),
            "proposer": Identity(kind="agent", name=proposer),
            "action": Action(
                type="scale",
                target=parse_target("deployment/web", namespace="shop"),
                replicas=ReplicaChange(from_=5, to=to),
            ),
            "rationale": "web has used under 10% CPU for an hour",
            "impact": Impact(savings_per_month=120, risk="low"),
            "created": NOON,
            "metrics": {"cpu_utilization": 0.1},
            **fields,
        }
    )


def escalated(store_path: Path) -> ApprovalRequest:
    """The issue's inverse case: the counter is refused, so shop-admins must decide."""
    now = datetime.now(UTC)
    store = SqliteStore(store_path)
    try:
        proposal = downscale(created=now, counters="refuse")
        store.propose(proposal)
        negotiate(store, defaults(), proposal.id, now=now)
        (request,) = [r for r in store.approvals() if r.proposal == proposal.id]
    finally:
        store.close()
    return request
