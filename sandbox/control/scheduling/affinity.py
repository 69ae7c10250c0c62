"""Affinity as the scheduler reads it from a pod spec: node selector and node affinity, and the
verdict of required inter-pod (anti-)affinity once its topology domains are known.

NodeSelectorTerms are ORed, the expressions of one term ANDed; `matchFields` knows only
`metadata.name`, as in Kubernetes, and an empty term matches no node. The same term matching
serves a PersistentVolume's `nodeAffinity`. Pure functions and values of specs and labels:
finding where other pods run is `interpod.py`'s part, and nothing here reads the store.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sandbox.selectors import Operator, Requirement

_OPERATORS: dict[str, Operator] = {
    "In": "in",
    "NotIn": "notin",
    "Exists": "exists",
    "DoesNotExist": "!",
    "Gt": "gt",
    "Lt": "lt",
}


def node_selector_matches(spec: Mapping[str, Any], name: str, labels: Mapping[str, str]) -> bool:
    """`nodeSelector` and required node affinity (terms ORed, expressions ANDed)."""
    for key, value in (spec.get("nodeSelector") or {}).items():
        if labels.get(key) != value:
            return False
    node_affinity = (spec.get("affinity") or {}).get("nodeAffinity") or {}
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if not required:
        return True
    return any(term_matches(t, name, labels) for t in required.get("nodeSelectorTerms") or ())


def term_matches(term: Mapping[str, Any], name: str, labels: Mapping[str, str]) -> bool:
    """One NodeSelectorTerm; an empty term matches no node, as in Kubernetes."""
    expressions = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not expressions and not fields:
        return False
    for expressions_of, present in ((expressions, labels), (fields, {"metadata.name": name})):
        for expr in expressions_of:
            operator = _OPERATORS.get(expr.get("operator", ""))
            if operator is None:
                return False
            values = tuple(str(v) for v in expr.get("values") or ())
            if not Requirement(expr.get("key", ""), operator, values).matches(present):
                return False
    return True


def preferred_weight(spec: Mapping[str, Any], name: str, labels: Mapping[str, str]) -> int:
    """The summed weights of the preferred node affinity terms the node matches."""
    node_affinity = (spec.get("affinity") or {}).get("nodeAffinity") or {}
    return sum(
        int(p.get("weight") or 0)
        for p in node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or ()
        if term_matches(p.get("preference") or {}, name, labels)
    )


def required_terms(spec: Mapping[str, Any], kind: str) -> list[Mapping[str, Any]]:
    """The required terms of `kind` ("podAffinity" or "podAntiAffinity")."""
    rules = (spec.get("affinity") or {}).get(kind) or {}
    return list(rules.get("requiredDuringSchedulingIgnoredDuringExecution") or ())


@dataclass
class Placement:
    """Topology domains a pod's required pod (anti-)affinity terms allow or refuse."""

    affinity: list[tuple[str, set[str] | None]] = field(default_factory=list)  # None: anywhere
    anti: list[tuple[str, set[str]]] = field(default_factory=list)

    def reason(self, labels: Mapping[str, str]) -> str:
        for key, domains in self.affinity:
            if domains is not None and labels.get(key) not in domains:
                return "node(s) didn't match pod affinity rules"
        for key, refused in self.anti:
            if key in labels and labels[key] in refused:
                return "node(s) didn't match pod anti-affinity rules"
        return ""
