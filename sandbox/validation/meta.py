"""Rules every object shares: `metadata` (name, namespace, labels, annotations) and the
`metav1.LabelSelector` structure that many specs embed.

How a kind's names are checked (DNS subdomain, DNS label, URL path segment) is passed in by the
caller, which owns the per-kind table; this module knows no kinds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sandbox.errors import Cause
from sandbox.validation import causes, names
from sandbox.validation.payload import items, mapping, string_map, strings, text

NameCheck = Callable[[str, bool], list[str]]  # (name, is_generate_name_prefix) -> problems

TOTAL_ANNOTATION_BYTES = 256 * 1024
_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def subdomain_name(name: str, prefix: bool) -> list[str]:
    return names.dns1123_subdomain(names.mask_trailing_dash(name) if prefix else name)


def label_name(name: str, prefix: bool) -> list[str]:
    return names.dns1123_label(names.mask_trailing_dash(name) if prefix else name)


def path_segment_name(name: str, prefix: bool) -> list[str]:
    problems = names.path_segment(name)
    # A generateName prefix may be "." as long as a suffix follows.
    return [p for p in problems if not p.startswith("may not be '")] if prefix else problems


def validate_metadata(
    obj: Mapping[str, Any], *, namespaced: bool, name_check: NameCheck
) -> list[Cause]:
    meta = mapping(obj, "metadata")
    found: list[Cause] = []
    generate_name = text(meta, "generateName")
    if generate_name:
        found += causes.invalid_each(
            "metadata.generateName", generate_name, name_check(generate_name, True)
        )
    name = text(meta, "name")
    if not name:
        # The write path turns generateName into a name first; a prefix alone is not an error.
        if not generate_name:
            found.append(causes.required("metadata.name", "name or generateName is required"))
    else:
        found += causes.invalid_each("metadata.name", name, name_check(name, False))
    # A namespace on a cluster-scoped object is ignored, as the API server clears it on write.
    if namespaced:
        namespace = text(meta, "namespace")
        if not namespace:
            found.append(causes.required("metadata.namespace"))
        else:
            found += causes.invalid_each(
                "metadata.namespace", namespace, names.dns1123_label(namespace)
            )
    found += validate_labels(string_map(meta, "labels"), path="metadata.labels")
    found += validate_annotations(string_map(meta, "annotations"), path="metadata.annotations")
    return found


def validate_labels(labels: Mapping[str, str], path: str) -> list[Cause]:
    found: list[Cause] = []
    for key, value in labels.items():
        found += causes.invalid_each(path, key, names.qualified_name(key))
        found += causes.invalid_each(path, value, names.label_value(value))
    return found


def validate_annotations(annotations: Mapping[str, str], path: str) -> list[Cause]:
    # Annotation keys are qualified names in which case does not matter.
    found: list[Cause] = []
    for key in annotations:
        found += causes.invalid_each(path, key, names.qualified_name(key.lower()))
    size = sum(len(k.encode()) + len(v.encode()) for k, v in annotations.items())
    if size > TOTAL_ANNOTATION_BYTES:
        found.append(causes.too_long(path, TOTAL_ANNOTATION_BYTES))
    return found


def validate_label_selector(selector: Mapping[str, Any], path: str) -> list[Cause]:
    """The structure of a `metav1.LabelSelector`; an absent selector is the caller's concern."""
    found = validate_labels(string_map(selector, "matchLabels"), path=f"{path}.matchLabels")
    for i, expr in enumerate(items(selector, "matchExpressions")):
        found += _selector_requirement(expr, f"{path}.matchExpressions[{i}]")
    return found


def _selector_requirement(expr: Mapping[str, Any], path: str) -> list[Cause]:
    found: list[Cause] = []
    operator = expr.get("operator")
    values = strings(expr, "values")
    if operator in ("In", "NotIn") and not values:
        found.append(
            causes.required(
                f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'"
            )
        )
    elif operator in ("Exists", "DoesNotExist") and values:
        found.append(
            causes.forbidden(
                f"{path}.values",
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )
        )
    elif operator not in _SELECTOR_OPERATORS:
        found.append(causes.invalid(f"{path}.operator", operator, "not a valid selector operator"))
    key = text(expr, "key")
    found += causes.invalid_each(f"{path}.key", key, names.qualified_name(key))
    for i, value in enumerate(values):
        found += causes.invalid_each(f"{path}.values[{i}]", value, names.label_value(value))
    return found


def selector_is_empty(selector: Mapping[str, Any]) -> bool:
    return not mapping(selector, "matchLabels") and not items(selector, "matchExpressions")
