"""Which feasible nodes score best for a pod, in the shape of kube-scheduler's default plugins.

NodeResourcesFit (least allocated) and NodeResourcesBalancedAllocation on the scoring requests,
spreading the pods of one controlling owner, preferred node affinity and PreferNoSchedule taints,
each normalized across the feasible nodes and weighted as the default profile weighs them. Ties
are left to the caller, which settles them with a generator seeded by the pod, so runs repeat.
"""

from __future__ import annotations

from sandbox.control.nodes import tolerates
from sandbox.control.scheduling.affinity import preferred_weight
from sandbox.control.scheduling.cache import Cache, NodeFacts
from sandbox.control.scheduling.requests import Ask, scoring_requests


def best_nodes(ask: Ask, feasible: list[str], cache: Cache, *, owner: str) -> list[str]:
    """The feasible nodes with the top score, in the order given."""
    wanted = scoring_requests(ask.spec)
    siblings = cache.owners.get(owner) if owner else None
    raw: dict[str, tuple[float, int, int, int]] = {}
    for name in feasible:
        node = cache.nodes[name]
        used = cache.scored.get(name)
        cpu = _fraction((used["cpu"] if used else 0) + wanted["cpu"], node, "cpu")
        memory = _fraction((used["memory"] if used else 0) + wanted["memory"], node, "memory")
        least = (2 - cpu - memory) * 50
        balanced = (1 - abs(cpu - memory) / 2) * 100
        intolerable = sum(
            1
            for t in node.taints
            if t.get("effect") == "PreferNoSchedule" and not tolerates(ask.tolerations, t)
        )
        preferred = preferred_weight(ask.spec, name, node.labels) if ask.prefers else 0
        raw[name] = (
            least + balanced,
            siblings[name] if siblings else 0,
            preferred,
            intolerable,
        )
    most_siblings = max(r[1] for r in raw.values()) or 1
    most_affinity = max(r[2] for r in raw.values()) or 1
    most_taints = max(r[3] for r in raw.values()) or 1
    scores = {
        name: base
        + 2 * 100 * (most_siblings - sib) / most_siblings
        + 2 * 100 * aff / most_affinity
        + 3 * 100 * (most_taints - taints) / most_taints
        for name, (base, sib, aff, taints) in raw.items()
    }
    best = max(scores.values())
    return [n for n in feasible if scores[n] >= best - 1e-6]


def _fraction(amount: int, node: NodeFacts, resource: str) -> float:
    capacity = node.allocatable.get(resource, 0)
    return min(amount / capacity, 1.0) if capacity else 1.0
