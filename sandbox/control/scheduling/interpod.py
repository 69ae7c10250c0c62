"""Inter-pod affinity against the pods already placed, by topology domain.

`placement` works out which domains (values of a term's `topologyKey` among the nodes) a pod's
own required podAffinity and podAntiAffinity terms allow; `forbidden_by_existing` the domains
where a placed pod's required anti-affinity refuses the incoming pod. Terms look in their own
namespace, the listed ones, or those a `namespaceSelector` picks (an empty one: all). Pods are
read through the controller it is handed, nodes and placements from the scheduler's `Cache`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from sandbox.control.runtime import PODS, Controller
from sandbox.control.scheduling.affinity import Placement, required_terms
from sandbox.control.scheduling.cache import Cache, item_of
from sandbox.selectors import LabelSelector
from sandbox.store import Key, Obj

NAMESPACES: Key = ("", "namespaces")


def placement(ctl: Controller, cache: Cache, pod: Obj) -> Placement | None:
    """Where the pod's own required pod (anti-)affinity terms allow it, by topology domain."""
    spec = pod.get("spec") or {}
    affinity, anti = (
        required_terms(spec, "podAffinity"),
        required_terms(spec, "podAntiAffinity"),
    )
    if not affinity and not anti:
        return None
    namespace = pod["metadata"]["namespace"]
    labels = pod["metadata"].get("labels") or {}
    rules = Placement()
    for term, wanted in [(t, True) for t in affinity] + [(t, False) for t in anti]:
        key = term.get("topologyKey") or ""
        selector = LabelSelector.from_object(term.get("labelSelector"))
        namespaces = _term_namespaces(ctl, term, namespace)
        domains = {
            value
            for other, node in _placed_pods(ctl, cache, namespaces)
            if selector.matches(other["metadata"].get("labels"))
            and (value := cache.label(node, key)) is not None
        }
        if wanted:
            # The first pod of a group that selects itself may go anywhere.
            alone = (
                not domains
                and selector.matches(labels)
                and (namespaces is None or namespace in namespaces)
            )
            rules.affinity.append((key, None if alone else domains))
        else:
            rules.anti.append((key, domains))
    return rules


def forbidden_by_existing(ctl: Controller, cache: Cache, pod: Obj) -> set[tuple[str, str]]:
    """(topology key, value) pairs where a placed pod's anti-affinity refuses this pod."""
    namespace = pod["metadata"]["namespace"]
    labels = pod["metadata"].get("labels") or {}
    forbidden: set[tuple[str, str]] = set()
    for item in list(cache.anti):
        other = ctl.get(PODS, *item)
        node = cache.placed_on(item)
        if other is None or node is None:
            continue
        for term in required_terms(other.get("spec") or {}, "podAntiAffinity"):
            namespaces = _term_namespaces(ctl, term, item[0])
            if namespaces is not None and namespace not in namespaces:
                continue
            if not LabelSelector.from_object(term.get("labelSelector")).matches(labels):
                continue
            key = term.get("topologyKey") or ""
            if (value := cache.label(node, key)) is not None:
                forbidden.add((key, value))
    return forbidden


def _term_namespaces(ctl: Controller, term: Mapping[str, Any], own: str) -> set[str] | None:
    """The namespaces a pod affinity term looks in (None: all of them)."""
    listed = set(term.get("namespaces") or ())
    if "namespaceSelector" not in term or term["namespaceSelector"] is None:
        return listed or {own}
    selector = LabelSelector.from_object(term["namespaceSelector"])
    if selector.empty:
        return None
    return listed | {
        ns["metadata"]["name"]
        for ns in ctl.list(NAMESPACES)
        if selector.matches(ns["metadata"].get("labels"))
    }


def _placed_pods(
    ctl: Controller, cache: Cache, namespaces: set[str] | None
) -> Iterator[tuple[Obj, str]]:
    """Pods occupying a node, with their node, in `namespaces` (None: all namespaces)."""
    if namespaces is None:
        for item, node in cache.placed():
            if (found := ctl.get(PODS, *item)) is not None:
                yield found, node
        return
    for namespace in sorted(namespaces):
        for pod in ctl.list(PODS, namespace):
            if (placed := cache.placed_on(item_of(pod))) is not None:
                yield pod, placed
