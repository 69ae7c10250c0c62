"""What the scheduler remembers between decisions: nodes as it sees them, and what the pods placed
on each node use.

`NodeFacts` is a node parsed once per resourceVersion. `Cache` keeps, per node, the requests of
the pods bound to it (as the fit filter counts them and as scoring counts them), pods per node
of each controlling owner (for spreading) and the placed pods with required anti-affinity terms.
It is fed by every pod change, so a decision costs O(nodes), not O(pods). It reads nothing from
the store itself: the controller hands it the objects.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sandbox.control.nodes import NOT_READY, UNREACHABLE
from sandbox.control.ownership import controller_uid
from sandbox.control.runtime import Item
from sandbox.control.scheduling.affinity import required_terms
from sandbox.control.scheduling.requests import pod_requests, scoring_requests
from sandbox.kubelet.features import declared
from sandbox.quantity import millicores, units
from sandbox.store import Obj


@dataclass(frozen=True)
class NodeFacts:
    """What filters and scores need of a node, parsed once per resourceVersion."""

    name: str
    labels: Mapping[str, str]
    unschedulable: bool
    taints: tuple[Mapping[str, Any], ...]
    allocatable: Mapping[str, int]
    declared: frozenset[str]  # status.declaredFeatures

    @classmethod
    def of(cls, node: Obj) -> NodeFacts:
        spec, status = node.get("spec") or {}, node.get("status") or {}
        taints = tuple(spec.get("taints") or ())
        ready = any(
            c.get("type") == "Ready" and c.get("status") == "True"
            for c in status.get("conditions") or ()
        )
        if not ready and not any(t.get("key") in (NOT_READY, UNREACHABLE) for t in taints):
            # Not Ready before the lifecycle controller tainted it: the taint it will get.
            taints += ({"key": NOT_READY, "effect": "NoSchedule"},)
        allocatable = {
            k: (millicores(v) if k == "cpu" else units(v))
            for k, v in (status.get("allocatable") or {}).items()
        }
        return cls(
            name=node["metadata"]["name"],
            labels=dict(node["metadata"].get("labels") or {}),
            unschedulable=bool(spec.get("unschedulable")),
            taints=taints,
            allocatable=allocatable,
            declared=declared(node),
        )

    def shape(self) -> tuple[object, ...]:
        """What, if it changes, may let an unschedulable pod fit."""
        taints = tuple((t.get("key"), t.get("value"), t.get("effect")) for t in self.taints)
        return (
            sorted(self.labels.items()),
            self.unschedulable,
            taints,
            sorted(self.allocatable.items()),
            sorted(self.declared),
        )


class Cache:
    """Nodes and the resources their placed pods request, kept current change by change."""

    def __init__(self) -> None:
        self.nodes: dict[str, NodeFacts] = {}
        self._node_rv: dict[str, str] = {}
        self.used: dict[str, Counter[str]] = {}  # node -> requested resources of its pods
        self.scored: dict[str, Counter[str]] = {}  # node -> requests with non-zero defaults
        self._counted: dict[Item, tuple[str, Counter[str], Counter[str], str]] = {}
        self.owners: dict[str, Counter[str]] = {}  # controller uid -> pods per node
        self.anti: dict[Item, None] = {}  # bound pods with required anti-affinity terms

    def see_node(self, node: Obj) -> NodeFacts:
        name, rv = node["metadata"]["name"], node["metadata"].get("resourceVersion", "")
        if self._node_rv.get(name) != rv or name not in self.nodes:
            self.nodes[name] = NodeFacts.of(node)
            self._node_rv[name] = rv
        return self.nodes[name]

    def drop_node(self, name: str) -> None:
        self.nodes.pop(name, None)
        self._node_rv.pop(name, None)

    def account(self, item: Item, pod: Obj | None) -> tuple[bool, bool]:
        """Keep per-node requests current; returns (room was freed, a pod was newly placed)."""
        old = self._counted.get(item)
        node = node_of(pod) if pod is not None else None
        if old is not None and old[0] == node:
            return False, False
        if old is not None:
            del self._counted[item]
            self.used[old[0]].subtract(old[1])
            self.scored[old[0]].subtract(old[2])
            if old[3]:
                siblings = self.owners[old[3]]
                siblings[old[0]] -= 1
                if siblings[old[0]] <= 0:
                    del siblings[old[0]]
                if not siblings:
                    del self.owners[old[3]]
            self.anti.pop(item, None)
        if pod is None or node is None:
            return old is not None, False
        spec = pod.get("spec") or {}
        requests, scored, owner = (
            pod_requests(spec),
            scoring_requests(spec),
            controller_uid(pod) or "",
        )
        self._counted[item] = (node, requests, scored, owner)
        self.used.setdefault(node, Counter()).update(requests)
        self.scored.setdefault(node, Counter()).update(scored)
        if owner:
            self.owners.setdefault(owner, Counter())[node] += 1
        if required_terms(spec, "podAntiAffinity"):
            self.anti[item] = None
        return old is not None, True

    def placed_on(self, item: Item) -> str | None:
        """The node a counted pod occupies (None: the pod occupies none)."""
        counted = self._counted.get(item)
        return counted[0] if counted is not None else None

    def placed(self) -> list[tuple[Item, str]]:
        """Every counted pod with its node."""
        return [(item, node) for item, (node, *_) in self._counted.items()]

    def label(self, node: str, key: str) -> str | None:
        facts = self.nodes.get(node)
        return facts.labels.get(key) if facts is not None else None


def item_of(pod: Obj) -> Item:
    return (pod["metadata"].get("namespace", ""), pod["metadata"]["name"])


def node_of(pod: Obj) -> str | None:
    """The node a pod occupies resources on: bound and not finished (terminating still counts)."""
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return None
    node = (pod.get("spec") or {}).get("nodeName")
    return str(node) if node else None
