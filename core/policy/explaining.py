"""A policy in words, rule by rule, with what it selects: for `kubecrew policy explain`.

Built-in rules are named as evaluation cites them (`rule min-replicas`), so a person reading a
verdict's citation can find the sentence that explains it here. Custom rules show their CEL as
written: paraphrasing code would drift from it.

The kinds read by one agent are explained by what their reader does with them, named as that
reader cites it: a NamespaceBlueprint by the objects the Platform agent renders in each
namespace, an ImagePolicy by the audit's checks (`check image-registry`) and the gate's rules
(`rule allowed-registries`), a NodeReadinessPolicy by the Cluster Operator's rules (`rule
device-plugin`, and `rule kubelet-ready`, always there).
"""

from __future__ import annotations

from core.policy.catalog import LoadedPolicy
from core.policy.documents import (
    CapacityPolicy,
    ChangePolicy,
    CostPolicy,
    EgressPolicy,
    ImagePolicy,
    NamespaceBlueprint,
    NodeReadinessPolicy,
    Ownership,
    PatchPolicy,
    PriorityPolicy,
)
from core.policy.documents.blueprint import Amounts
from core.policy.documents.common import Condition, format_duration
from core.policy.documents.priority import TEAM_LABEL
from core.policy.documents.selectors import LabelSelector
from core.policy.proposals import DEFAULT_EXPIRY


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
    if isinstance(document, NamespaceBlueprint):
        return _blueprint(document)
    if isinstance(document, ImagePolicy):
        return _images(document)
    if isinstance(document, NodeReadinessPolicy):
        return _readiness(document)
    if isinstance(document, PatchPolicy):
        return _patch(document)
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


def _namespaces(names: list[str] | None, selector: LabelSelector | None) -> str:
    """`namespace shop, or namespaces labelled kubecrew.io/class=team` ("" when neither)."""
    chosen = []
    if names is not None:
        chosen.append(f"namespace {' or '.join(names)}")
    if selector is not None:
        chosen.append(f"namespaces labelled {selector.describe()}")
    return ", or ".join(chosen)


def _amounts(amounts: Amounts) -> str:
    return ", ".join(f"{name} {value}" for name, value in amounts.items())


def _blueprint(policy: NamespaceBlueprint) -> list[str]:
    spec, name = policy.spec, policy.metadata.name
    lines = [f"Selects {_namespaces(spec.namespaces, spec.namespaceSelector)}"]
    if spec.requiredLabels:
        lines.append(
            f"required labels: each namespace carries {', '.join(spec.requiredLabels)} "
            "(reported when missing, not fixed: it belongs in the Namespace's own manifest)"
        )
    if spec.resourceQuota is not None:
        lines.append(
            f"ResourceQuota {name}: the namespace may use at most "
            f"{_amounts(spec.resourceQuota.hard)}"
        )
    limits = spec.limitRange
    if limits is not None:
        parts = [
            f"{said} {_amounts(amounts)}"
            for said, amounts in (
                ("default requests (if it sets none)", limits.defaultRequest),
                ("default limits (if it sets none)", limits.default),
                ("at least", limits.min),
                ("at most", limits.max),
            )
            if amounts
        ]
        lines.append(f"LimitRange {name}, per container: {'; '.join(parts)}")
    if spec.networkPolicy is not None:
        who = (
            "only from pods of the same namespace"
            if spec.networkPolicy.ingress == "same-namespace"
            else "from nowhere (all ingress denied)"
        )
        lines.append(f"NetworkPolicy {name}: the namespace's pods accept traffic {who}")
    if spec.teamAccess is not None:
        lines.append(
            f"RoleBinding {name}: ClusterRole {spec.teamAccess.clusterRole} for the owning team's "
            "groups and users (from its Ownership; not rendered while no Ownership names them)"
        )
    lines.append(
        "The Platform agent renders these objects in each selected namespace, fixes drift by "
        "pull request and confirms from live state"
    )
    return lines


def _images(policy: ImagePolicy) -> list[str]:
    spec = policy.spec
    where = _namespaces(spec.namespaces, spec.namespaceSelector) or "every namespace"
    severity = "medium" if spec.requireDigest else "low"
    return [
        f"Selects the containers of pods in {where}",
        f"check image-registry: an image pulled from outside {', '.join(spec.allowedRegistries)} "
        "is a high-severity audit finding (a host, or a host/path prefix; `nginx` is pulled "
        "from docker.io/library)",
        f"check image-digest: an image not pinned by digest (@sha256:...) is a {severity}-"
        "severity finding" + (" (requireDigest)" if spec.requireDigest else ""),
        "The Platform agent's audit reports these with evidence, and the policy gate judges "
        "every write that brings in an image: rule allowed-registries refuses one from "
        "elsewhere, rule require-digest warns of one not pinned"
        + ("" if spec.requireDigest else " (off here)"),
    ]


def _nodes(selector: LabelSelector) -> str:
    selected = selector.describe()
    return "every node" if selected == "everything" else f"nodes labelled {selected}"


def _readiness(policy: NodeReadinessPolicy) -> list[str]:
    spec = policy.spec
    lines = [
        f"Selects {_nodes(spec.nodeSelector)}",
        f"taint {spec.taint.describe()}: held on a selected node until every rule below holds "
        "there, put back when one breaks",
        "rule kubelet-ready: the kubelet reports the node Ready (always required, never enough)",
    ]
    for rule in spec.rules:
        why = f": {rule.description}" if rule.description else ""
        lines.append(f"rule {rule.name}: {rule.describe()}{why}")
    lines.append("The Cluster Operator checks these on live state and removes the taint")
    return lines


def _patch(policy: PatchPolicy) -> list[str]:
    spec = policy.spec
    pools = ", ".join(spec.pools) or "every pool"
    wants = [f"kernel {spec.minimumKernel} or later"] if spec.minimumKernel else []
    wants += [f"OS image {spec.minimumOSImage} or later"] if spec.minimumOSImage else []
    return [
        f"Selects the nodes of {pools}",
        f"requires {' and '.join(wants)}",
        f"a node below is rolled onto machine template {spec.template} within "
        f"{format_duration(spec.within)}",
        "The Cluster Operator finds such nodes on its patrol and rolls their pool like an upgrade",
    ]


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
    if isinstance(document, NamespaceBlueprint):
        return _blueprint_summary(document)
    if isinstance(document, ImagePolicy):
        digests = ", digests required" if document.spec.requireDigest else ""
        return f"images from {', '.join(document.spec.allowedRegistries)}{digests}"
    if isinstance(document, NodeReadinessPolicy):
        ready = document.spec
        rules = ", ".join(rule.name for rule in ready.rules)
        return f"{_nodes(ready.nodeSelector)} tainted {ready.taint.describe()} until {rules}"
    if isinstance(document, PatchPolicy):
        patch = document.spec
        floor = ", ".join(v for v in (patch.minimumKernel, patch.minimumOSImage) if v)
        return f"{', '.join(patch.pools) or 'every pool'} at {floor} or later, via {patch.template}"
    return ""


def _blueprint_summary(policy: NamespaceBlueprint) -> str:
    spec = policy.spec
    parts = [
        part
        for part, given in (
            ("quota", spec.resourceQuota),
            ("limit range", spec.limitRange),
            ("network policy", spec.networkPolicy),
            ("team access", spec.teamAccess),
        )
        if given is not None
    ]
    if spec.requiredLabels:
        parts.append(f"{len(spec.requiredLabels)} required label(s)")
    return ", ".join(parts)


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
