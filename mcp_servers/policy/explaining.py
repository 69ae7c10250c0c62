"""A policy in words, rule by rule, with what it selects: for `kubecrew policy explain`.

Built-in rules are named as evaluation cites them (`rule min-replicas`), so a person reading a
verdict's citation can find the sentence that explains it here. Custom rules show their CEL as
written: paraphrasing code would drift from it.
"""

from __future__ import annotations

from mcp_servers.policy.approvals import DEFAULT_EXPIRY
from mcp_servers.policy.catalog import LoadedPolicy
from mcp_servers.policy.documents import (
    CapacityPolicy,
    ChangePolicy,
    CostPolicy,
    EgressPolicy,
    Ownership,
    PriorityPolicy,
)
from mcp_servers.policy.documents.common import Condition, format_duration
from mcp_servers.policy.documents.priority import TEAM_LABEL


def explain(policy: LoadedPolicy) -> list[str]:
    """Lines of text: a title, what it selects, then one line per rule (indented details)."""
    document = policy.document
    title = str(policy)
    team = document.metadata.labels.get(TEAM_LABEL)
    if team:
        title += f", by team {team}"
    if policy.source is not None:
        title += f" ({policy.source})"
    return [title, *_body(document)]


def _body(document: object) -> list[str]:
    if isinstance(document, CapacityPolicy):
        return _capacity(document)
    if isinstance(document, CostPolicy):
        return _cost(document)
    if isinstance(document, EgressPolicy):
        return _egress(document)
    if isinstance(document, ChangePolicy):
        return _change(document)
    if isinstance(document, PriorityPolicy):
        return _priority(document)
    if isinstance(document, Ownership):
        return _ownership(document)
    return []


def _priority(policy: PriorityPolicy) -> list[str]:
    spec = policy.spec
    ties = ", then ".join(spec.tieBreaks) or "the rejection holds"
    return [
        f"Order of concerns: {' > '.join(spec.ranked())}",
        f"Ties within a concern: {ties}",
        *([spec.description] if spec.description else []),
    ]


def _ownership(policy: Ownership) -> list[str]:
    spec = policy.spec
    owns = "; ".join(selector.describe() for selector in spec.owns)
    people = spec.humans.describe() if spec.humans else "no humans named"
    return [f"Team {spec.team} (agent {spec.agent or 'none'}; {people}) owns: {owns}"]


def _custom(rule: Condition, effect: str, extra: str = "") -> str:
    actions = f" on {', '.join(rule.actions)}" if rule.actions is not None else ""
    said = f": {rule.message or rule.description}" if rule.message or rule.description else ""
    return f"rule {rule.name}{actions}: when {rule.when}, {effect}{said}{extra}"


def _capacity(policy: CapacityPolicy) -> list[str]:
    spec = policy.spec
    lines = [f"Selects {spec.selector.describe()}"]
    if spec.minReplicas is not None:
        lines.append(
            f"rule min-replicas: a scale below {spec.minReplicas} replicas is rejected with a "
            f"counter-offer of {spec.minReplicas}; deleting the workload is rejected"
        )
    if spec.minAvailable is not None:
        lines.append(
            f"rule min-available: an eviction leaving fewer than {spec.minAvailable} pods "
            "available is rejected"
        )
    if spec.maxUnavailable is not None:
        lines.append(
            f"rule max-unavailable: evicting more than {spec.maxUnavailable} pods at once is "
            "rejected"
        )
    for rule in spec.rules:
        counter = ""
        if rule.counter is not None:
            low, high = rule.counter.minReplicas, rule.counter.maxReplicas
            counter = f" (accepts replicas from {low or 0} to {high or 'any'})"
        lines.append(_custom(rule, rule.effect, counter))
    return lines


def _cost(policy: CostPolicy) -> list[str]:
    spec = policy.spec
    lines = [f"Selects {spec.selector.describe()}"]
    if spec.underused is not None:
        used = spec.underused
        lines.append(
            f"rule underused: underused when {used.metric} averaged over "
            f"{format_duration(used.window)} is below {used.below:.2f}; an allowed saving on an "
            "underused target is supported"
        )
    allowed = ", ".join(spec.allowedActions) or "none"
    lines.append(f"rule allowed-actions: allowed savings are {allowed}; any other is rejected")
    lines += [
        _custom(rule, "mark it underused" if rule.effect == "underused" else rule.effect)
        for rule in spec.rules
    ]
    return lines


def _egress(policy: EgressPolicy) -> list[str]:
    spec = policy.spec
    chosen = []
    if spec.namespaces is not None:
        chosen.append(f"namespace {' or '.join(spec.namespaces)}")
    if spec.namespaceSelector is not None:
        chosen.append(f"namespaces labelled {spec.namespaceSelector.describe()}")
    lines = [
        f"Selects pods in {', or in '.join(chosen)}",
        "rule allowed-destinations: a NetworkPolicy there may open egress only to:",
    ]
    lines += [f"  {d.name}: {d.describe()}" for d in spec.destinations]
    return lines + [_custom(rule, rule.effect) for rule in spec.rules]


def _change(policy: ChangePolicy) -> list[str]:
    spec = policy.spec
    lines = [f"Selects {spec.selector.describe()}"]
    for approval in spec.approvals:
        condition = f" when {approval.when}" if approval.when != "true" else ""
        actions = ", ".join(approval.actions) if approval.actions is not None else "any action"
        expiry = format_duration(approval.expiresAfter or DEFAULT_EXPIRY)
        lines.append(
            f"rule {approval.name}: {actions}{condition} needs {approval.minApprovals} "
            f"approval(s) from {approval.approvers.describe()}, within {expiry} (then the "
            f"request expires and the change is rejected)"
        )
    if spec.maintenance is not None:
        windows = "; ".join(f"{w.name} {w.describe()}" for w in spec.maintenance.windows)
        lines.append(
            f"rule maintenance-window: {', '.join(spec.maintenance.actions)} only inside "
            f"{windows}; outside, it waits for the next opening"
        )
    limits = spec.blastRadius
    if limits is not None and limits.maxEvictionsPerHour is not None:
        lines.append(
            f"rule max-evictions-per-hour: at most {limits.maxEvictionsPerHour} evictions per hour"
        )
    if limits is not None and limits.maxReplicaChangeFraction is not None:
        lines.append(
            f"rule max-replica-change-fraction: one scale changes at most "
            f"{limits.maxReplicaChangeFraction:.0%} of a workload's replicas (at least one)"
        )
    if spec.directPatches == "forbidden":
        lines.append("rule direct-patches: direct patches are forbidden; pull requests only")
    return lines + [_custom(rule, rule.effect) for rule in spec.rules]


def summary(document: object) -> str:
    """One phrase per policy, for listings: what it mostly says."""
    if isinstance(document, CapacityPolicy):
        return _capacity_summary(document)
    if isinstance(document, CostPolicy):
        return _cost_summary(document)
    if isinstance(document, EgressPolicy):
        names = ", ".join(d.name for d in document.spec.destinations)
        return ", ".join([f"egress to {names}", *_rules(len(document.spec.rules))])
    if isinstance(document, ChangePolicy):
        return _change_summary(document)
    if isinstance(document, PriorityPolicy):
        return " > ".join(document.spec.ranked())
    if isinstance(document, Ownership):
        agent = f" ({document.spec.agent})" if document.spec.agent else ""
        return f"team {document.spec.team}{agent}"
    return ""


def _capacity_summary(policy: CapacityPolicy) -> str:
    spec = policy.spec
    named = (
        ("minReplicas", spec.minReplicas),
        ("minAvailable", spec.minAvailable),
        ("maxUnavailable", spec.maxUnavailable),
    )
    limits = [f"{name} {value}" for name, value in named if value is not None]
    return ", ".join(limits + _rules(len(spec.rules)))


def _cost_summary(policy: CostPolicy) -> str:
    spec = policy.spec
    parts = [f"allows {', '.join(spec.allowedActions) or 'no saving'}"]
    if spec.underused is not None:
        used = spec.underused
        window = format_duration(used.window)
        parts.insert(0, f"underused below {used.below:.2f} {used.metric} over {window}")
    return ", ".join(parts + _rules(len(spec.rules)))


def _change_summary(policy: ChangePolicy) -> str:
    spec = policy.spec
    parts = [f"{len(spec.approvals)} approval rule(s)"]
    if spec.maintenance is not None:
        parts.append(f"windows for {', '.join(spec.maintenance.actions)}")
    if spec.blastRadius is not None:
        parts.append("blast-radius limits")
    if spec.directPatches == "forbidden":
        parts.append("pull requests only")
    return ", ".join(parts + _rules(len(spec.rules)))


def _rules(count: int) -> list[str]:
    return [f"{count} custom rule(s)"] if count else []
