"""ClusterRoles by name, with aggregated ClusterRoles resolved to the union of what they select.

A ClusterRole with an `aggregationRule` owns no rules of its own: Kubernetes' aggregation
controller keeps its `rules` equal to the union of the rules of every other ClusterRole whose labels
match any of its `clusterRoleSelectors`. The sandbox has no such controller, so the authorizer
resolves aggregation when it reads the roles; `aggregated_rules` gives the same union to whoever
wants to write it back into the object (so `kubectl get clusterrole admin -o yaml` looks real).
Aggregation is transitive (admin selects edit, which selects view); a cycle stops at the role
already being resolved, which then contributes its stored rules.

This module knows nothing of bindings, users or storage.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sandbox.rbac.rules import Rule, compile_rules, unique


def selector_matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """A metav1.LabelSelector against labels; the empty selector matches everything."""
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    return all(_expression_matches(e, labels) for e in selector.get("matchExpressions") or ())


def _expression_matches(expression: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key = expression.get("key", "")
    operator = expression.get("operator")
    values = expression.get("values") or ()
    if operator == "In":
        return key in labels and labels[key] in values
    if operator == "NotIn":
        return key not in labels or labels[key] not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    return False  # an unknown operator never validates on a real server, so it selects nothing


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name", ""))


def _labels(obj: Mapping[str, Any]) -> Mapping[str, str]:
    labels = (obj.get("metadata") or {}).get("labels")
    return labels if isinstance(labels, Mapping) else {}


def _selectors(obj: Mapping[str, Any]) -> list[Mapping[str, Any]] | None:
    """The clusterRoleSelectors, or None when the role is not aggregated."""
    rule = obj.get("aggregationRule")
    if not isinstance(rule, Mapping):
        return None
    return [s for s in rule.get("clusterRoleSelectors") or () if isinstance(s, Mapping)]


class ClusterRoleIndex:
    """The ClusterRoles of one read, with effective rules computed on demand and memoized."""

    def __init__(self, cluster_roles: Iterable[Mapping[str, Any]]) -> None:
        self._roles = {_name(role): role for role in cluster_roles}
        self._ordered = sorted(self._roles)
        self._resolved: dict[str, tuple[Rule, ...]] = {}

    def __contains__(self, name: object) -> bool:
        return name in self._roles

    def rules(self, name: str) -> tuple[Rule, ...] | None:
        """The effective rules of ClusterRole `name`, or None if there is no such role."""
        if name not in self._roles:
            return None
        return self._resolve(name, set())

    def _resolve(self, name: str, resolving: set[str]) -> tuple[Rule, ...]:
        done = self._resolved.get(name)
        if done is not None:
            return done
        role = self._roles[name]
        selectors = _selectors(role)
        if selectors is None or name in resolving:
            rules = compile_rules(role.get("rules"))
            if selectors is None:
                self._resolved[name] = rules
            return rules
        resolving.add(name)
        collected: list[Rule] = []
        for selector in selectors:
            for other in self._ordered:
                if other != name and selector_matches(selector, _labels(self._roles[other])):
                    collected.extend(self._resolve(other, resolving))
        resolving.discard(name)
        rules = unique(collected)
        self._resolved[name] = rules
        return rules


def aggregated_rules(
    cluster_role: Mapping[str, Any], cluster_roles: Iterable[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The `rules` an aggregated ClusterRole should carry, given all ClusterRoles.

    A ClusterRole without an aggregationRule keeps its own rules.
    """
    roles = [r for r in cluster_roles if _name(r) != _name(cluster_role)]
    index = ClusterRoleIndex([*roles, cluster_role])
    return [rule.to_dict() for rule in index.rules(_name(cluster_role)) or ()]
