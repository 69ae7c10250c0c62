"""What a ChangePolicy says about an action: gates that hold whichever concern wins.

Approvals name who must agree; the maintenance window defers an action to the next opening;
the blast radius caps evictions per hour (counting `metrics.evictions_last_hour`) and the share of
a workload's replicas one scale may change (the counter-offer stays within it: at least one
replica may always change); `directPatches: forbidden` sends changes through pull requests.
A gate that lacks the input it needs is an error finding: the verdict cannot be allow.
"""

from __future__ import annotations

from core.policy.checks.base import Scope, condition, finding, rule_findings, unevaluable
from core.policy.documents.change import BlastRadius, ChangePolicy, Maintenance
from core.policy.findings import Finding, ReplicaBounds

EVICTIONS_METRIC = "evictions_last_hour"
# Actions a pull request can carry (a manifest change); drains, evictions and cordons cannot.
_THROUGH_GIT = frozenset({"scale", "patch", "apply", "delete", "resize", "restart", "rollback"})


def check(scope: Scope, policy: ChangePolicy) -> list[Finding]:
    spec = policy.spec
    found = _approvals(scope, policy)
    if spec.maintenance is not None and scope.action.type in spec.maintenance.actions:
        found.append(_window(scope, policy, spec.maintenance))
    if spec.blastRadius is not None:
        found += _blast_radius(scope, policy, spec.blastRadius)
    if spec.directPatches == "forbidden" and scope.action.type in _THROUGH_GIT:
        found.append(_direct_patch(scope, policy))
    return found + rule_findings(scope, policy, spec.rules, None)


def _approvals(scope: Scope, policy: ChangePolicy) -> list[Finding]:
    found: list[Finding] = []
    for rule in policy.spec.approvals:
        outcome = condition(scope, rule)
        if outcome is None:
            continue
        if outcome.error is not None:
            found.append(unevaluable(policy, rule.name, outcome.error, None))
        elif outcome.value:
            message = f"needs {rule.minApprovals} approval(s) from {rule.approvers.describe()}"
            if rule.description:
                message += f" ({rule.description})"
            found.append(
                finding(
                    policy,
                    rule.name,
                    "require-approval",
                    message,
                    concern=None,
                    approvers=rule.approvers,
                    min_approvals=rule.minApprovals,
                    expires_after=rule.expiresAfter,
                )
            )
        else:
            message = f"no approval needed: {rule.when} does not hold"
            found.append(finding(policy, rule.name, "pass", message, concern=None))
    return found


def _window(scope: Scope, policy: ChangePolicy, maintenance: Maintenance) -> Finding:
    now = scope.request.now
    for window in maintenance.windows:
        if window.is_open(now):
            message = f"inside maintenance window {window.name} ({window.describe()})"
            return finding(policy, "maintenance-window", "pass", message, concern=None)
    openings = [(w.next_opening(now), w) for w in maintenance.windows]
    upcoming = sorted((at, w.name) for at, w in openings if at is not None)
    names = ", ".join(f"{w.name} ({w.describe()})" for w in maintenance.windows)
    message = f"{scope.action.type} waits for a maintenance window: {names}"
    opens_at = upcoming[0][0] if upcoming else None
    if opens_at is not None:
        message += f"; {upcoming[0][1]} opens at {opens_at.isoformat()}"
    return finding(policy, "maintenance-window", "defer", message, concern=None, opens_at=opens_at)


def _blast_radius(scope: Scope, policy: ChangePolicy, limits: BlastRadius) -> list[Finding]:
    found: list[Finding] = []
    action = scope.action
    if limits.maxEvictionsPerHour is not None and action.type in ("drain", "evict"):
        found.append(_evictions(scope, policy, limits.maxEvictionsPerHour))
    if limits.maxReplicaChangeFraction is not None and action.type == "scale":
        found.append(_replica_change(scope, policy, limits.maxReplicaChangeFraction))
    return found


def _evictions(scope: Scope, policy: ChangePolicy, most: int) -> Finding:
    rule = "max-evictions-per-hour"
    done, pods = scope.request.metrics.get(EVICTIONS_METRIC), scope.action.pods
    if done is None or pods is None:
        reason = f"it needs action.pods and metrics.{EVICTIONS_METRIC}"
        return unevaluable(policy, rule, reason, None)
    total = int(done) + pods
    if total > most:
        message = (
            f"{pods} evictions after {int(done)} in the last hour makes {total}; at most {most}"
        )
        return finding(policy, rule, "reject", message, concern=None)
    message = f"{total} evictions in the hour, within {most}"
    return finding(policy, rule, "pass", message, concern=None)


def _replica_change(scope: Scope, policy: ChangePolicy, fraction: float) -> Finding:
    rule = "max-replica-change-fraction"
    current, replicas = scope.current_replicas(), scope.action.replicas
    if current is None or replicas is None:
        reason = "it needs the current replicas (replicas.from or a target object)"
        return unevaluable(policy, rule, reason, None)
    if current == 0:
        return finding(policy, rule, "pass", "nothing runs yet: nothing to disrupt", concern=None)
    step = max(1, int(fraction * current))
    change = abs(replicas.to - current)
    if change <= step:
        message = f"changes {change} of {current} replicas, within {step} ({fraction:.0%})"
        return finding(policy, rule, "pass", message, concern=None)
    message = f"changes {change} of {current} replicas at once; at most {step} ({fraction:.0%})"
    bounds = ReplicaBounds(minimum=current - step, maximum=current + step)
    return finding(policy, rule, "reject", message, concern=None, bounds=bounds)


def _direct_patch(scope: Scope, policy: ChangePolicy) -> Finding:
    if scope.action.via == "pull-request":
        message = "goes through a pull request, as required"
        return finding(policy, "direct-patches", "pass", message, concern=None)
    message = "direct patches are forbidden here: open a pull request instead"
    via = "pull-request"
    return finding(policy, "direct-patches", "reject", message, concern=None, via=via)
