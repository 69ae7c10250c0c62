"""Actions and requests as the tests write them: short, with the demo shop's defaults."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mcp_servers.policy.actions import Action, EvaluationRequest, ReplicaChange, parse_target
from mcp_servers.policy.catalog import PolicySet
from mcp_servers.policy.evaluation import evaluate
from mcp_servers.policy.findings import EvaluationReport
from mcp_servers.policy.loading import load

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
