"""What a pod needs from ConfigMaps and Secrets before it can run, and what is missing.

Two checks, as a kubelet makes them at two different moments:
- `missing_volume`: before any container, every configMap/secret volume (also inside projected
  volumes) must exist unless `optional: true`; otherwise the pod stays ContainerCreating with a
  `FailedMount` event ('MountVolume.SetUp failed for volume "cfg" : configmap "x" not found').
- `missing_env`: when a container is created, every `env[].valueFrom` configMapKeyRef /
  secretKeyRef and `envFrom` source must resolve; otherwise the container waits in
  CreateContainerConfigError with Kubernetes' message.
Both take a `lookup(kind, name)` so this module reads no store; it only knows the pod spec shape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Lookup = Callable[[str, str], dict[str, Any] | None]  # ("configmaps" | "secrets", name) -> obj

_NOUN = {"configmaps": "configmap", "secrets": "secret"}
_KIND = {"configmaps": "ConfigMap", "secrets": "Secret"}


def missing_volume(spec: dict[str, Any], lookup: Lookup) -> tuple[str, str] | None:
    """(volume name, reason) of the first volume that cannot be mounted, or None."""
    for volume in spec.get("volumes") or ():
        for plural, ref in _volume_sources(volume):
            name = str((ref.get("secretName") if plural == "secrets" else ref.get("name")) or "")
            if ref.get("optional") is True:
                continue
            obj = lookup(plural, name)
            if obj is None:
                return str(volume.get("name")), f'{_NOUN[plural]} "{name}" not found'
            data = {**(obj.get("data") or {}), **(obj.get("binaryData") or {})}
            for item in ref.get("items") or ():
                if item.get("key") not in data and plural == "configmaps":
                    return str(volume.get("name")), (
                        f"configmap references non-existent config key: {item.get('key')}"
                    )
                if item.get("key") not in data:
                    return str(volume.get("name")), (
                        f"references non-existent secret key: {item.get('key')}"
                    )
    return None


def missing_env(container: dict[str, Any], namespace: str, lookup: Lookup) -> str | None:
    """Why the container's environment cannot be built, or None when it can."""
    for source in container.get("envFrom") or ():
        for field, plural in (("configMapRef", "configmaps"), ("secretRef", "secrets")):
            ref = source.get(field)
            optional = not isinstance(ref, dict) or ref.get("optional")
            if not optional and lookup(plural, str(ref.get("name") or "")) is None:
                return f'{_NOUN[plural]} "{ref.get("name")}" not found'
    for variable in container.get("env") or ():
        value_from = variable.get("valueFrom") or {}
        for field, plural in (("configMapKeyRef", "configmaps"), ("secretKeyRef", "secrets")):
            ref = value_from.get(field)
            if not isinstance(ref, dict) or ref.get("optional"):
                continue
            name, key = str(ref.get("name") or ""), str(ref.get("key") or "")
            obj = lookup(plural, name)
            if obj is None:
                return f'{_NOUN[plural]} "{name}" not found'
            if key not in (obj.get("data") or {}) and key not in (obj.get("binaryData") or {}):
                return f"couldn't find key {key} in {_KIND[plural]} {namespace}/{name}"
    return None


def env_names(container: dict[str, Any], lookup: Lookup) -> set[str]:
    """Names of the variables the container will see (for profiles that require some)."""
    names = {str(v.get("name")) for v in container.get("env") or () if _has_value(v)}
    for source in container.get("envFrom") or ():
        prefix = str(source.get("prefix") or "")
        for field, plural in (("configMapRef", "configmaps"), ("secretRef", "secrets")):
            ref = source.get(field)
            if isinstance(ref, dict):
                obj = lookup(plural, str(ref.get("name") or "")) or {}
                names.update(prefix + k for k in (obj.get("data") or {}))
    return names


def references(spec: dict[str, Any]) -> set[tuple[str, str]]:
    """Every (plural, name) the pod refers to, so a change to one can wake the pod."""
    found: set[tuple[str, str]] = set()
    for volume in spec.get("volumes") or ():
        for plural, ref in _volume_sources(volume):
            found.add((plural, str(ref.get("secretName") or ref.get("name") or "")))
    for container in [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]:
        for source in container.get("envFrom") or ():
            for field, plural in (("configMapRef", "configmaps"), ("secretRef", "secrets")):
                if isinstance(source.get(field), dict):
                    found.add((plural, str(source[field].get("name") or "")))
        for variable in container.get("env") or ():
            value_from = variable.get("valueFrom") or {}
            for field, plural in (("configMapKeyRef", "configmaps"), ("secretKeyRef", "secrets")):
                if isinstance(value_from.get(field), dict):
                    found.add((plural, str(value_from[field].get("name") or "")))
    return found


def _has_value(variable: dict[str, Any]) -> bool:
    return bool(variable.get("value")) or bool(variable.get("valueFrom"))


def _volume_sources(volume: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    sources: list[tuple[str, dict[str, Any]]] = []
    if isinstance(volume.get("configMap"), dict):
        sources.append(("configmaps", volume["configMap"]))
    if isinstance(volume.get("secret"), dict):
        sources.append(("secrets", volume["secret"]))
    for projection in (volume.get("projected") or {}).get("sources") or ():
        if isinstance(projection.get("configMap"), dict):
            sources.append(("configmaps", projection["configMap"]))
        if isinstance(projection.get("secret"), dict):
            ref = projection["secret"]
            sources.append(("secrets", {**ref, "secretName": ref.get("name")}))
    return sources
