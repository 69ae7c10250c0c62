"""The HorizontalPodAutoscaler row, whose TARGETS cell pairs each metric's current value with
its target: `cpu: 42%/80%`, `memory: 120Mi/200Mi`, `5/10 (avg)`, `... + 1 more...`.

autoscaling/v2 defaults `minReplicas` to 1 and an empty metric list to CPU at 80% utilization;
absent fields read as those defaults. Quantities print as stored. Reads object JSON only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sandbox.tables.cells import NONE, items, sub
from sandbox.tables.printer import AGE, NAME, Column, Printer, age_of, name_of

_UNKNOWN = "<unknown>"
_SHOWN = 2
_DEFAULT_METRICS = [
    {
        "type": "Resource",
        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}},
    }
]
# Metric type -> the key holding its source, in spec.metrics[] and status.currentMetrics[].
_SOURCE_KEYS = {
    "Resource": "resource",
    "ContainerResource": "containerResource",
    "Pods": "pods",
    "Object": "object",
    "External": "external",
}


def _current(status: Mapping[str, Any] | None, key: str, field: str) -> str:
    value = sub(status, key, "current").get(field)
    return _UNKNOWN if value is None else str(value)


def _resource_target(spec: Mapping[str, Any], status: Mapping[str, Any] | None, key: str) -> str:
    source = sub(spec, key)
    target = sub(source, "target")
    name = source.get("name", "")
    if target.get("averageValue") is not None:
        return f"{name}: {_current(status, key, 'averageValue')}/{target['averageValue']}"
    utilization = sub(status, key, "current").get("averageUtilization")
    current = _UNKNOWN if utilization is None else f"{utilization}%"
    wanted = target.get("averageUtilization")
    return f"{name}: {current}/{'<auto>' if wanted is None else f'{wanted}%'}"


def _value_target(spec: Mapping[str, Any], status: Mapping[str, Any] | None, key: str) -> str:
    target = sub(spec, key, "target")
    if target.get("averageValue") is not None:
        return f"{_current(status, key, 'averageValue')}/{target['averageValue']} (avg)"
    return f"{_current(status, key, 'value')}/{target.get('value', '')}"


def _metric_text(spec: Mapping[str, Any], status: Mapping[str, Any] | None) -> str:
    kind = spec.get("type")
    key = _SOURCE_KEYS.get(str(kind))
    if key is None:
        return "<unknown type>"
    if kind in ("Resource", "ContainerResource"):
        return _resource_target(spec, status, key)
    if kind == "Pods":
        average = sub(spec, key, "target").get("averageValue", "")
        return f"{_current(status, key, 'averageValue')}/{average}"
    return _value_target(spec, status, key)


def targets(spec_metrics: list[Any], statuses: list[Any]) -> str:
    if not spec_metrics:
        return NONE
    texts = [
        _metric_text(metric, statuses[i] if i < len(statuses) else None)
        for i, metric in enumerate(spec_metrics)
    ]
    shown = ", ".join(texts[:_SHOWN])
    extra = len(texts) - _SHOWN
    return f"{shown} + {extra} more..." if extra > 0 else shown


def _hpa(obj: dict[str, Any], now: float) -> list[Any]:
    spec, status = sub(obj, "spec"), sub(obj, "status")
    ref = sub(spec, "scaleTargetRef")
    minimum = spec.get("minReplicas")
    return [
        name_of(obj),
        f"{ref.get('kind', '')}/{ref.get('name', '')}",
        targets(items(spec, "metrics") or _DEFAULT_METRICS, items(status, "currentMetrics")),
        str(1 if minimum is None else minimum),
        int(spec.get("maxReplicas") or 0),
        int(status.get("currentReplicas") or 0),
        age_of(obj, now),
    ]


PRINTERS: Mapping[tuple[str, str], Printer] = {
    ("autoscaling", "HorizontalPodAutoscaler"): Printer(
        (
            NAME,
            Column("Reference", "The workload being scaled."),
            Column("Targets", "Current value and target of each metric."),
            Column("MinPods", "The fewest replicas the autoscaler keeps."),
            Column("MaxPods", "The most replicas the autoscaler allows."),
            Column("Replicas", "Replicas the autoscaler currently sees."),
            AGE,
        ),
        _hpa,
    )
}
