"""Why a node cannot take a pod, and how kube-scheduler words it in `FailedScheduling`.

`node_reasons` runs the filters in the real plugin order and stops at the first that refuses:
NodeUnschedulable, TaintToleration, NodeAffinity, NodeDeclaredFeatures, NodePorts,
NodeResourcesFit (every resource short is named), VolumeBinding's node affinity, then
InterPodAffinity (the pod's own terms, then placed pods' anti-affinity). NodeDeclaredFeatures
refuses a node whose `status.declaredFeatures` lacks one the pod requires, with kube-scheduler's
"node(s) didn't match Pod's required features"; where it sits among the node-only filters is the
sandbox's choice. `failure_message` counts the reasons per node and adds the preemption verdict;
this scheduler never preempts, but says whether preemption could have helped as kube-scheduler
does (never for a missing feature: evicting pods cannot give a node one). Everything the filters
need is worked out beforehand and handed in.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from sandbox.control.nodes import UNSCHEDULABLE, tolerates
from sandbox.control.runtime import Controller
from sandbox.control.scheduling.affinity import Placement, node_selector_matches
from sandbox.control.scheduling.cache import NodeFacts, node_of
from sandbox.control.scheduling.requests import Ask
from sandbox.store import Obj

NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"
# Reasons a preemption could in principle fix (kube-scheduler's Unschedulable, not ...Unresolvable).
RESOLVABLE_PREFIXES = (
    "Insufficient ",
    "Too many pods",
    "node(s) didn't match pod anti-affinity",
    "node(s) didn't satisfy existing",
    "node(s) didn't have free ports",
)

_CORDONED = {"key": UNSCHEDULABLE, "effect": "NoSchedule"}
MISSING_FEATURES = "node(s) didn't match Pod's required features"


def node_reasons(
    ask: Ask,
    node: NodeFacts,
    *,
    used: Counter[str] | None,
    pinned: frozenset[str] | None,
    placement: Placement | None,
    forbidden: set[tuple[str, str]],
    free_ports: set[str] | None,
) -> list[str]:
    """Why `node` cannot take the pod, by the first filter that refuses it ([]: it can)."""
    if node.unschedulable and not tolerates(ask.tolerations, _CORDONED):
        return ["node(s) were unschedulable"]
    for taint in node.taints:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(
            ask.tolerations, taint
        ):
            key, value = taint.get("key", ""), taint.get("value", "")
            return [f"node(s) had untolerated taint {{{key}: {value}}}"]
    if ask.selective and not node_selector_matches(ask.spec, node.name, node.labels):
        return ["node(s) didn't match Pod's node affinity/selector"]
    if not node.declared.issuperset(ask.features):
        return [MISSING_FEATURES]
    if free_ports is not None and node.name not in free_ports:
        return ["node(s) didn't have free ports for the requested pod ports"]
    short = [
        "Too many pods" if resource == "pods" else f"Insufficient {resource}"
        for resource, amount in ask.needs
        if (used[resource] if used else 0) + amount > node.allocatable.get(resource, 0)
    ]
    if short:
        return short
    if pinned is not None and node.name not in pinned:
        return ["node(s) had volume node affinity conflict"]
    if placement is not None and (why := placement.reason(node.labels)):
        return [why]
    for key, value in forbidden:
        if node.labels.get(key) == value:
            return ["node(s) didn't satisfy existing pods anti-affinity rules"]
    return []


def nodes_with_free_ports(ctl: Controller, nodes: Iterable[str], pod: Obj) -> set[str] | None:
    """Nodes where the pod's host ports are free (None: it asks for none)."""
    wanted = _host_ports(pod.get("spec") or {})
    if not wanted:
        return None
    free = set()
    for name in nodes:
        taken = {
            port
            for other in ctl.ctx.index.pods_on(name)
            if node_of(other) is not None
            for port in _host_ports(other.get("spec") or {})
        }
        if not any(_ports_clash(a, b) for a in wanted for b in taken):
            free.add(name)
    return free


def failure_message(reasons: Mapping[str, list[str]], total: int) -> str:
    """`FailedScheduling` when every one of `total` nodes refused, with the reasons per node."""
    if not total:
        return "no nodes available to schedule pods"
    counts = Counter(r for why in reasons.values() for r in why)
    verdicts = Counter(
        NO_VICTIMS if all(r.startswith(RESOLVABLE_PREFIXES) for r in why) else NOT_HELPFUL
        for why in reasons.values()
    )
    return (
        f"0/{total} nodes are available: {_counted(counts)}. "
        f"preemption: 0/{total} nodes are available: {_counted(verdicts)}."
    )


def whole_message(problem: str, total: int) -> str:
    """`FailedScheduling` for a reason no node can help with (a missing claim, say)."""
    return (
        f"0/{total} nodes are available: {problem}. "
        f"preemption: 0/{total} nodes are available: {total} {NOT_HELPFUL}."
    )


def _host_ports(spec: Mapping[str, Any]) -> set[tuple[int, str, str]]:
    return {
        (int(port["hostPort"]), port.get("protocol") or "TCP", port.get("hostIP") or "0.0.0.0")
        for container in spec.get("containers") or ()
        for port in container.get("ports") or ()
        if port.get("hostPort")
    }


def _ports_clash(a: tuple[int, str, str], b: tuple[int, str, str]) -> bool:
    return a[:2] == b[:2] and (a[2] == b[2] or "0.0.0.0" in (a[2], b[2]))


def _counted(counts: Mapping[str, int]) -> str:
    return ", ".join(sorted(f"{n} {reason}" for reason, n in counts.items()))
