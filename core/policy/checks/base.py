"""What every kind's check shares: the request with its CEL context, citations, custom rules.

A check reads one policy and the request and returns findings; it never decides between
concerns (`resolution` does) and never raises for a bad rule: a condition that cannot be
evaluated is an `error` finding naming the rule and the reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import cel as celrs

from core.policy import cel
from core.policy.actions import Action, EvaluationRequest
from core.policy.documents import PolicyDocument
from core.policy.documents.capacity import CapacityRule
from core.policy.documents.common import Concern, Condition, Rule
from core.policy.documents.priority import TEAM_LABEL
from core.policy.findings import Citation, Effect, Finding, ReplicaBounds


@dataclass(frozen=True)
class Scope:
    """One evaluation's input, with the CEL context built once for all of its rules."""

    request: EvaluationRequest
    variables: celrs.Context

    @classmethod
    def of(cls, request: EvaluationRequest) -> Scope:
        return cls(request, cel.context(request.cel_input()))

    @property
    def action(self) -> Action:
        return self.request.action

    def current_replicas(self) -> int | None:
        """The workload's replica count now: the action's `from`, else the live object's."""
        if self.action.replicas is not None and self.action.replicas.from_ is not None:
            return self.action.replicas.from_
        current = ((self.request.target or {}).get("spec") or {}).get("replicas")
        return current if isinstance(current, int) else None


def finding(
    policy: PolicyDocument,
    rule: str,
    effect: Effect,
    message: str,
    *,
    concern: Concern | None,
    **details: Any,
) -> Finding:
    return Finding(
        citation=Citation(kind=policy.kind, policy=policy.metadata.name, rule=rule),
        concern=concern,
        effect=effect,
        message=message,
        team=policy.metadata.labels.get(TEAM_LABEL),
        **details,
    )


def condition(scope: Scope, rule: Condition) -> cel.Outcome | None:
    """The rule's condition for this action; None when the rule is not about its type."""
    if not rule.applies_to(scope.action.type):
        return None
    return cel.evaluate(rule.when, scope.variables)


def unevaluable(policy: PolicyDocument, rule: str, reason: str, concern: Concern | None) -> Finding:
    message = f"rule {rule} could not be evaluated: {reason}"
    return finding(policy, rule, "error", message, concern=concern)


def rule_findings(
    scope: Scope, policy: PolicyDocument, rules: Sequence[Rule], concern: Concern | None
) -> list[Finding]:
    """The findings of a policy's own CEL rules (reject or warn when their condition holds)."""
    found: list[Finding] = []
    for rule in rules:
        outcome = condition(scope, rule)
        if outcome is None:
            continue
        if outcome.error is not None:
            found.append(unevaluable(policy, rule.name, outcome.error, concern))
        elif outcome.value:
            bounds = None
            if isinstance(rule, CapacityRule) and rule.counter is not None:
                low, high = rule.counter.minReplicas, rule.counter.maxReplicas
                bounds = ReplicaBounds(minimum=low, maximum=high)
            message = rule.message or rule.description or f"{rule.when} holds"
            found.append(
                finding(policy, rule.name, rule.effect, message, concern=concern, bounds=bounds)
            )
        else:
            message = f"{rule.when} does not hold"
            found.append(finding(policy, rule.name, "pass", message, concern=concern))
    return found
