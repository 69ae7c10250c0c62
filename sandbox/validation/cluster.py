"""Rules for cluster-infrastructure kinds: Nodes (taints, pod CIDR), PersistentVolumeClaims
(access modes, storage request, volume mode) and Leases (durations and counters).

Namespaces need no rule beyond their name, which the per-kind name table covers.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from sandbox.errors import Cause
from sandbox.validation import causes, meta, names, quantity
from sandbox.validation.payload import integer, items, mapping, strings, text

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
VOLUME_MODES = ("Block", "Filesystem")
_CIDR_EXAMPLE = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"


def validate_node(obj: Mapping[str, Any]) -> list[Cause]:
    spec = mapping(obj, "spec")
    found: list[Cause] = []
    cidr = text(spec, "podCIDR")
    if cidr and not _is_cidr(cidr):
        found.append(causes.invalid("spec.podCIDR", cidr, _CIDR_EXAMPLE))
    for i, cidr in enumerate(strings(spec, "podCIDRs")):
        if not _is_cidr(cidr):
            found.append(causes.invalid(f"spec.podCIDRs[{i}]", cidr, _CIDR_EXAMPLE))
    return found + _taints(items(spec, "taints"), "spec.taints")


def _is_cidr(value: str) -> bool:
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        return False
    return "/" in value


def _taints(taints: list[Mapping[str, Any]], path: str) -> list[Cause]:
    found: list[Cause] = []
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(taints):
        at = f"{path}[{i}]"
        key, value, effect = text(taint, "key"), text(taint, "value"), text(taint, "effect")
        found += causes.invalid_each(f"{at}.key", key, names.qualified_name(key))
        if problems := names.label_value(value):
            found.append(causes.invalid(f"{at}.value", value, ";".join(problems)))
        if not effect:
            found.append(causes.required(f"{at}.effect"))
        elif effect not in TAINT_EFFECTS:
            found.append(causes.not_supported(f"{at}.effect", effect, TAINT_EFFECTS))
        if (key, effect) in seen:
            found.append(
                causes.duplicate(at, dict(taint), "taints must be unique by key and effect pair")
            )
        seen.add((key, effect))
    return found


def validate_persistent_volume_claim(obj: Mapping[str, Any]) -> list[Cause]:
    spec = mapping(obj, "spec")
    found: list[Cause] = []
    modes = strings(spec, "accessModes")
    if not modes:
        found.append(causes.required("spec.accessModes", "at least 1 access mode is required"))
    for mode in modes:
        if mode not in ACCESS_MODES:
            found.append(causes.not_supported("spec.accessModes", mode, ACCESS_MODES))
    if "ReadWriteOncePod" in modes and any(m in ACCESS_MODES[:3] for m in modes):
        found.append(
            causes.forbidden(
                "spec.accessModes", "may not use ReadWriteOncePod with other access modes"
            )
        )
    found += _storage_request(mapping(mapping(spec, "resources"), "requests"))
    selector = spec.get("selector")
    if isinstance(selector, Mapping):
        found += meta.validate_label_selector(selector, path="spec.selector")
    volume_mode = spec.get("volumeMode")
    if volume_mode is not None and volume_mode not in VOLUME_MODES:
        found.append(causes.not_supported("spec.volumeMode", volume_mode, VOLUME_MODES))
    return found


def _storage_request(requests: Mapping[str, Any]) -> list[Cause]:
    path = "spec.resources[storage]"
    if "storage" not in requests:
        return [causes.required(path)]
    raw = requests["storage"]
    value = quantity.parse(raw)
    if value is None:
        return [causes.invalid(path, raw, quantity.FORMAT_ERROR)]
    if value <= 0:
        return [causes.invalid(path, raw, "must be greater than zero")]
    return []


def validate_lease(obj: Mapping[str, Any]) -> list[Cause]:
    spec = mapping(obj, "spec")
    found: list[Cause] = []
    duration = integer(spec, "leaseDurationSeconds")
    if duration is not None and duration <= 0:
        found.append(
            causes.invalid("spec.leaseDurationSeconds", duration, "must be greater than 0")
        )
    return found + causes.nonnegative("spec.leaseTransitions", integer(spec, "leaseTransitions"))
