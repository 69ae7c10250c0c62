"""Rules for the objects that bound how many pods run: PodDisruptionBudgets (how few may stay
during voluntary disruption) and HorizontalPodAutoscalers (how many may run).

Only the objects' own consistency is judged; whether the HPA's target exists or the budget
can be met is for the controllers that act on them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sandbox.errors import Cause
from sandbox.validation import causes, meta, names
from sandbox.validation.payload import integer, items, mapping, text

EVICTION_POLICIES = ("AlwaysAllow", "IfHealthyBudget")
METRIC_TYPES = ("ContainerResource", "External", "Object", "Pods", "Resource")


def validate_pod_disruption_budget(obj: Mapping[str, Any]) -> list[Cause]:
    spec = mapping(obj, "spec")
    found: list[Cause] = []
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        found.append(
            causes.invalid("spec", dict(spec), "minAvailable and maxUnavailable cannot be both set")
        )
    for counter in ("minAvailable", "maxUnavailable"):
        found += causes.int_or_percent(f"spec.{counter}", spec.get(counter), at_most_100=True)
    selector = spec.get("selector")
    if isinstance(selector, Mapping):
        found += meta.validate_label_selector(selector, path="spec.selector")
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in EVICTION_POLICIES:
        found.append(
            causes.not_supported("spec.unhealthyPodEvictionPolicy", policy, EVICTION_POLICIES)
        )
    return found


def validate_horizontal_pod_autoscaler(obj: Mapping[str, Any]) -> list[Cause]:
    spec = mapping(obj, "spec")
    found: list[Cause] = []
    low = integer(spec, "minReplicas")
    high = integer(spec, "maxReplicas") or 0  # absent reads as Go's zero value, like Kubernetes
    if low is not None and low < 1:
        found.append(causes.invalid("spec.minReplicas", low, "must be greater than or equal to 1"))
    if high < 1:
        found.append(causes.invalid("spec.maxReplicas", high, "must be greater than 0"))
    if low is not None and high < low:
        found.append(
            causes.invalid(
                "spec.maxReplicas", high, "must be greater than or equal to `minReplicas`"
            )
        )
    found += _target(mapping(spec, "scaleTargetRef"), "spec.scaleTargetRef")
    for i, metric in enumerate(items(spec, "metrics")):
        kind = metric.get("type")
        if not kind:
            found.append(
                causes.required(f"spec.metrics[{i}].type", "must specify a metric source type")
            )
        elif kind not in METRIC_TYPES:
            found.append(causes.not_supported(f"spec.metrics[{i}].type", kind, METRIC_TYPES))
    return found


def _target(ref: Mapping[str, Any], path: str) -> list[Cause]:
    found: list[Cause] = []
    for key in ("kind", "name"):
        value = text(ref, key)
        if not value:
            found.append(causes.required(f"{path}.{key}"))
        else:
            found += causes.invalid_each(f"{path}.{key}", value, names.path_segment(value))
    return found
