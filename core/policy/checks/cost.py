"""What a CostPolicy says about an action: the cost concern.

Only savings actions interest it: a scale down (downscale), a resize (right-size), a drain or
cordon of a node (consolidate). It supports an allowed saving on an underused target, objects to
a saving the policy does not allow (allowed-actions), and only warns when it cannot tell whether
the target is underused: a missing metric makes cost have no opinion, never blocks a change.
"""

from __future__ import annotations

from core.policy.checks.base import Scope, condition, finding, unevaluable
from core.policy.documents.common import Concern, format_duration
from core.policy.documents.cost import CostPolicy, Saving
from core.policy.findings import Finding

_CONCERN: Concern = "cost"


def saving_of(scope: Scope) -> Saving | None:
    action = scope.action
    if action.type == "scale" and action.replicas is not None:
        current = scope.current_replicas()
        return "downscale" if current is not None and action.replicas.to < current else None
    if action.type == "resize":
        return "right-size"
    if action.type in ("drain", "cordon") and action.target.kind == "Node":
        return "consolidate"
    return None


def check(scope: Scope, policy: CostPolicy) -> list[Finding]:
    found, underused_by = _custom_rules(scope, policy)
    saving = saving_of(scope)
    if saving is None:
        return found
    allowed = policy.spec.allowedActions
    if saving not in allowed:
        message = (
            f"{saving} is not an allowed saving here (allowed: {', '.join(allowed) or 'none'})"
        )
        return [*found, finding(policy, "allowed-actions", "reject", message, concern=_CONCERN)]
    message = f"{saving} is an allowed saving"
    found.append(finding(policy, "allowed-actions", "pass", message, concern=_CONCERN))
    return [*found, _underused(scope, policy, saving, underused_by)]


def _underused(scope: Scope, policy: CostPolicy, saving: str, by_rule: str | None) -> Finding:
    target, underuse = scope.action.target, policy.spec.underused
    if by_rule is not None:
        message = f"{target} is underused (rule {by_rule}): {saving} saves money"
        return finding(policy, by_rule, "support", message, concern=_CONCERN)
    if underuse is None:
        message = f"no rule finds {target} underused: {saving} saves little"
        return finding(policy, "underused", "warn", message, concern=_CONCERN)
    value = scope.request.metrics.get(underuse.metric)
    window = format_duration(underuse.window)
    if value is None:
        message = f"cannot tell whether {target} is underused: metric {underuse.metric} "
        message += f"(average over {window}) was not given"
        return finding(policy, "underused", "warn", message, concern=_CONCERN)
    measured = f"{underuse.metric} {value:.2f} over {window}"
    if value < underuse.below:
        message = f"{measured} is below {underuse.below:.2f}: underused, {saving} saves money"
        return finding(policy, "underused", "support", message, concern=_CONCERN)
    message = f"{measured} is not below {underuse.below:.2f}: not underused, little to save"
    return finding(policy, "underused", "warn", message, concern=_CONCERN)


def _custom_rules(scope: Scope, policy: CostPolicy) -> tuple[list[Finding], str | None]:
    found: list[Finding] = []
    underused_by: str | None = None
    for rule in policy.spec.rules:
        outcome = condition(scope, rule)
        if outcome is None:
            continue
        if outcome.error is not None:
            found.append(unevaluable(policy, rule.name, outcome.error, _CONCERN))
        elif outcome.value:
            effect = rule.effect
            if effect == "underused":
                underused_by = underused_by or rule.name
                continue
            message = rule.message or rule.description or f"{rule.when} holds"
            found.append(finding(policy, rule.name, effect, message, concern=_CONCERN))
        else:
            message = f"{rule.when} does not hold"
            found.append(finding(policy, rule.name, "pass", message, concern=_CONCERN))
    return found, underused_by
