"""What a CapacityPolicy says about an action: the reliability concern.

min-replicas rejects a scale below the minimum (accepting any count from the minimum up, which
becomes the counter-offer) and a delete of the workload. min-available and max-unavailable judge
evictions of the workload's pods against its current replicas, as a PodDisruptionBudget would.
"""

from __future__ import annotations

from core.policy.checks.base import Scope, finding, rule_findings, unevaluable
from core.policy.documents.capacity import CapacityPolicy
from core.policy.documents.common import Concern, resolve_count
from core.policy.findings import Finding, ReplicaBounds

_CONCERN: Concern = "reliability"


def check(scope: Scope, policy: CapacityPolicy) -> list[Finding]:
    spec = policy.spec
    found = _min_replicas(scope, policy) if spec.minReplicas is not None else []
    if scope.action.type == "evict" and (
        spec.minAvailable is not None or spec.maxUnavailable is not None
    ):
        found.append(_disruption(scope, policy))
    return found + rule_findings(scope, policy, spec.rules, _CONCERN)


def _min_replicas(scope: Scope, policy: CapacityPolicy) -> list[Finding]:
    minimum = policy.spec.minReplicas or 0
    action, target = scope.action, scope.action.target
    if action.type == "delete" and target.kind != "Pod":
        message = f"deleting {target} leaves none of the {minimum} replicas it must keep"
        return [finding(policy, "min-replicas", "reject", message, concern=_CONCERN)]
    if action.type != "scale" or action.replicas is None:
        return []
    asked = action.replicas.to
    if asked >= minimum:
        message = f"{asked} replicas keeps the minimum of {minimum}"
        return [finding(policy, "min-replicas", "pass", message, concern=_CONCERN)]
    message = f"{target} must keep at least {minimum} replicas; {asked} asked"
    bounds = ReplicaBounds(minimum=minimum)
    return [finding(policy, "min-replicas", "reject", message, concern=_CONCERN, bounds=bounds)]


def _disruption(scope: Scope, policy: CapacityPolicy) -> Finding:
    spec = policy.spec
    rule = "min-available" if spec.minAvailable is not None else "max-unavailable"
    current, pods = scope.current_replicas(), scope.action.pods
    if current is None or pods is None:
        reason = "it needs action.pods and the current replicas (replicas.from or a target object)"
        return unevaluable(policy, rule, reason, _CONCERN)
    if spec.minAvailable is not None:
        keep = resolve_count(spec.minAvailable, current)
        left = current - pods
        if left < keep:
            message = f"evicting {pods} of {current} pods leaves {left}; at least {keep} must stay"
            return finding(policy, rule, "reject", message, concern=_CONCERN)
        message = f"{left} of {current} pods stay available (at least {keep})"
        return finding(policy, rule, "pass", message, concern=_CONCERN)
    most = resolve_count(spec.maxUnavailable or 0, current)
    if pods > most:
        message = f"evicting {pods} of {current} pods at once; at most {most} may be unavailable"
        return finding(policy, rule, "reject", message, concern=_CONCERN)
    message = f"{pods} unavailable at once is within {most}"
    return finding(policy, rule, "pass", message, concern=_CONCERN)
