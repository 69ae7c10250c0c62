"""Rules that only exist on update: which fields may not change once an object exists.

Each rule compares the incoming object with the stored one. Comparisons are plain JSON
equality, so the caller must hand both objects in the same (defaulted) form: a field the
client omitted but the store holds defaulted reads as a change. Nothing is mutated: where
Kubernetes "munges" the allowed changes away before comparing, copies are made.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from sandbox.errors import Cause
from sandbox.validation import causes, quantity
from sandbox.validation.payload import items, mapping, path_get, string_map, strings, text

POD_UPDATE_MESSAGE = (
    "pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
    "`spec.tolerations` (only additions to existing tolerations),"
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"
)
STATEFULSET_MUTABLE = (
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
)
STATEFULSET_MESSAGE = (
    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
    "'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and "
    "'minReadySeconds' are forbidden"
)
PVC_MESSAGE = (
    "spec is immutable after creation except resources.requests and "
    "volumeAttributesClassName for bound claims"
)
WHEN_IMMUTABLE = "field is immutable when `immutable` is set"


def metadata(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    """Name, namespace and uid never change; an omitted one means "unchanged"."""
    found: list[Cause] = []
    for key in ("name", "namespace", "uid"):
        value = text(mapping(new, "metadata"), key)
        if value:
            found += causes.immutable(f"metadata.{key}", value, text(mapping(old, "metadata"), key))
    return found


def _selector(obj: Mapping[str, Any]) -> object:
    """spec.selector with empty parts dropped: `matchExpressions: []` equals an absent one."""
    selector = path_get(obj, "spec.selector")
    if not isinstance(selector, Mapping):
        return selector
    return {k: v for k, v in selector.items() if v not in (None, {}, [])}


def selector(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    if _selector(new) == _selector(old):
        return []
    return [causes.invalid("spec.selector", path_get(new, "spec.selector"), causes.IMMUTABLE)]


def job(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    found = selector(new, old)
    return found + causes.immutable(
        "spec.template", path_get(new, "spec.template"), path_get(old, "spec.template")
    )


def stateful_set(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    def fixed(obj: Mapping[str, Any]) -> dict[str, Any]:
        spec = {k: v for k, v in mapping(obj, "spec").items() if k not in STATEFULSET_MUTABLE}
        spec["selector"] = _selector(obj)
        return spec

    return [] if fixed(new) == fixed(old) else [causes.forbidden("spec", STATEFULSET_MESSAGE)]


def pod(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    new_spec, old_spec = mapping(new, "spec"), mapping(old, "spec")
    for group in ("containers", "initContainers"):
        if len(items(new_spec, group)) != len(items(old_spec, group)):
            return [
                causes.forbidden(f"spec.{group}", "pod updates may not add or remove containers")
            ]
    found = _active_deadline(new_spec, old_spec) + _tolerations(new_spec, old_spec)
    changed = _changed_pod_fields(new_spec, old_spec)
    if changed:
        detail = f"{POD_UPDATE_MESSAGE}\nchanged: " + ", ".join(f"spec.{k}" for k in changed)
        found.append(causes.forbidden("spec", detail))
    return found


def _changed_pod_fields(new_spec: Mapping[str, Any], old_spec: Mapping[str, Any]) -> list[str]:
    """Spec fields that still differ once the changes Kubernetes allows are undone."""
    munged = dict(new_spec)
    for group in ("containers", "initContainers"):
        if group in new_spec:
            pairs = zip(items(new_spec, group), items(old_spec, group), strict=True)
            munged[group] = [_with_image_of(old_c, new_c) for new_c, old_c in pairs]
    for key in ("activeDeadlineSeconds", "tolerations"):
        _copy(munged, old_spec, key)  # checked on their own by _active_deadline, _tolerations
    grace = old_spec.get("terminationGracePeriodSeconds")
    if isinstance(grace, int) and grace < 0 and new_spec.get("terminationGracePeriodSeconds") == 1:
        munged["terminationGracePeriodSeconds"] = grace
    return sorted(k for k in set(munged) | set(old_spec) if munged.get(k) != old_spec.get(k))


def _with_image_of(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    return {**new, "image": old["image"]} if "image" in old else _without(new, "image")


def _without(obj: Mapping[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k != key}


def _copy(target: dict[str, Any], source: Mapping[str, Any], key: str) -> None:
    """Make `target[key]` what `source` has, absence included (target is a private copy)."""
    if key in source:
        target[key] = source[key]
    else:
        target.pop(key, None)


def _active_deadline(new_spec: Mapping[str, Any], old_spec: Mapping[str, Any]) -> list[Cause]:
    path = "spec.activeDeadlineSeconds"
    new_value = new_spec.get("activeDeadlineSeconds")
    old_value = old_spec.get("activeDeadlineSeconds")
    if new_value is None and old_value is not None:
        return [causes.invalid(path, None, "must not update from a positive integer to nil value")]
    if isinstance(new_value, int) and isinstance(old_value, int) and new_value > old_value:
        return [causes.invalid(path, new_value, "must be less than or equal to previous value")]
    return []


def _tolerations(new_spec: Mapping[str, Any], old_spec: Mapping[str, Any]) -> list[Cause]:
    # Existing tolerations must survive; only their tolerationSeconds may change.
    kept = [_without(t, "tolerationSeconds") for t in items(new_spec, "tolerations")]
    for toleration in items(old_spec, "tolerations"):
        if _without(toleration, "tolerationSeconds") not in kept:
            return [
                causes.forbidden(
                    "spec.tolerations",
                    "existing toleration can not be modified except its tolerationSeconds",
                )
            ]
    return []


def service(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    new_spec, old_spec = mapping(new, "spec"), mapping(old, "spec")
    if "ExternalName" in (new_spec.get("type"), old_spec.get("type")):
        return []  # the cluster IP is released or allocated when the type changes
    new_ip, old_ip = text(new_spec, "clusterIP"), text(old_spec, "clusterIP")
    if new_ip and old_ip and new_ip != old_ip:
        return [causes.invalid("spec.clusterIP", new_ip, causes.IMMUTABLE)]
    new_ips, old_ips = strings(new_spec, "clusterIPs"), strings(old_spec, "clusterIPs")
    if new_ips and old_ips and new_ips[0] != old_ips[0]:
        return [causes.invalid("spec.clusterIPs[0]", new_ips, "may not change once set")]
    return []


def persistent_volume_claim(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    new_spec, old_spec = dict(mapping(new, "spec")), dict(mapping(old, "spec"))
    new_size = quantity.parse(path_get(new_spec, "resources.requests.storage"))
    old_size = quantity.parse(path_get(old_spec, "resources.requests.storage"))
    for spec in (new_spec, old_spec):
        spec["resources"] = _without(mapping(spec, "resources"), "requests")
    _copy(new_spec, old_spec, "volumeAttributesClassName")
    if not text(old_spec, "volumeName"):
        _copy(old_spec, new_spec, "volumeName")  # binding sets the volume name once
    found = [] if new_spec == old_spec else [causes.forbidden("spec", PVC_MESSAGE)]
    if new_size is not None and old_size is not None and new_size < old_size:
        found.append(
            causes.forbidden(
                "spec.resources.requests.storage", "field can not be less than previous value"
            )
        )
    return found


def config_map(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    return _locked_data(new, old, keys=("data", "binaryData"))


def secret(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    new_type, old_type = text(new, "type") or "Opaque", text(old, "type") or "Opaque"
    found = causes.immutable("type", new_type, old_type)
    effective = {**new, "data": _secret_data(new)}
    return found + _locked_data(effective, {**old, "data": _secret_data(old)}, keys=("data",))


def _secret_data(obj: Mapping[str, Any]) -> dict[str, str]:
    """data with stringData folded in, as the API server stores a Secret."""
    merged = string_map(obj, "data")
    for key, value in string_map(obj, "stringData").items():
        merged[key] = base64.b64encode(value.encode()).decode()
    return merged


def _locked_data(
    new: Mapping[str, Any], old: Mapping[str, Any], *, keys: tuple[str, ...]
) -> list[Cause]:
    if old.get("immutable") is not True:
        return []
    found: list[Cause] = []
    if new.get("immutable") is not True:
        found.append(causes.forbidden("immutable", WHEN_IMMUTABLE))
    for key in keys:
        if (new.get(key) or {}) != (old.get(key) or {}):
            found.append(causes.forbidden(key, WHEN_IMMUTABLE))
    return found


def role_binding(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    if new.get("roleRef") == old.get("roleRef"):
        return []
    return [causes.invalid("roleRef", new.get("roleRef"), "cannot change roleRef")]


def custom_resource_definition(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    # These decide where and how objects are stored, so they are fixed once established.
    found: list[Cause] = []
    for dotted in ("spec.group", "spec.scope", "spec.names.plural", "spec.names.kind"):
        found += causes.immutable(dotted, path_get(new, dotted), path_get(old, dotted))
    return found
