"""Which requests a policy (`spec.matchConstraints`) or a binding (`spec.matchResources`) is about.

Kubernetes' matcher, step for step: the namespace selector (never excluding a cluster-scoped
object other than a Namespace, which is judged by its own labels), the object selector (the new
or the old object's labels), the exclude rules, then the resource rules (which a binding may
leave out: it then narrows nothing). A rule matches by operation ("*" for all), API group,
version and resource; `pods` names the resource only, `pods/status` a subresource, `pods/*` all
of its subresources, `*` every resource but no subresource, `*/*` everything; `resourceNames`
and `scope` narrow it further.

The sandbox serves one version of each resource and no resource under two groups, so
`matchPolicy: Equivalent` matches exactly what `Exact` matches.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sandbox.admission_policies.request import NAMESPACES, AdmissionRequest
from sandbox.selectors import LabelSelector

ALL = "*"


def matches(
    match: Mapping[str, Any] | None,
    request: AdmissionRequest,
    *,
    namespace_labels: Mapping[str, str] | None,
) -> bool:
    """Whether `match` (a MatchResources) selects the request; None selects everything.

    `namespace_labels` are the labels of the request's namespace (of the Namespace itself for a
    Namespace), None for other cluster-scoped objects.
    """
    if not match:
        return True
    selector = _selector(match.get("namespaceSelector"))
    if namespace_labels is not None and not selector.matches(namespace_labels):
        return False
    selector = _selector(match.get("objectSelector"))
    if not selector.empty and not any(
        selector.matches(_labels(obj)) for obj in (request.object, request.old_object) if obj
    ):
        return False
    if any(_rule_matches(rule, request) for rule in _rules(match, "excludeResourceRules")):
        return False
    rules = _rules(match, "resourceRules")
    return not rules or any(_rule_matches(rule, request) for rule in rules)


def _selector(selector: Any) -> LabelSelector:
    """An absent selector is `{}` (everything) here, not the nil selector that matches nothing."""
    return LabelSelector.from_object(selector if isinstance(selector, Mapping) else {})


def _labels(obj: Mapping[str, Any]) -> Mapping[str, str]:
    labels = (obj.get("metadata") or {}).get("labels")
    return labels if isinstance(labels, Mapping) else {}


def _rules(match: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    found = match.get(key)
    return [r for r in found if isinstance(r, Mapping)] if isinstance(found, list) else []


def _rule_matches(rule: Mapping[str, Any], request: AdmissionRequest) -> bool:
    rt = request.rt
    return (
        _scope(rule.get("scope"), request)
        and _listed(rule.get("operations"), request.operation)
        and _listed(rule.get("apiGroups"), rt.group)
        and _listed(rule.get("apiVersions"), rt.version)
        and any(_resource(entry, request) for entry in _strings(rule.get("resources")))
        and (not _strings(rule.get("resourceNames")) or request.name in rule["resourceNames"])
    )


def _scope(scope: Any, request: AdmissionRequest) -> bool:
    namespace_object = request.rt.key == NAMESPACES
    if scope == "Namespaced":
        return not namespace_object and request.rt.namespaced
    if scope == "Cluster":
        return namespace_object or not request.rt.namespaced
    return True  # "*" or unset


def _listed(values: Any, value: str) -> bool:
    listed = _strings(values)
    return ALL in listed or value in listed


def _resource(entry: str, request: AdmissionRequest) -> bool:
    resource, _, subresource = entry.partition("/")
    return resource in (ALL, request.rt.plural) and subresource in (ALL, request.subresource)


def _strings(values: Any) -> list[str]:
    return [v for v in values if isinstance(v, str)] if isinstance(values, list) else []
