"""Rules for pod specs, wherever they appear: Pods, and the pod templates of workloads.

Checks the fields users get wrong in manifests (containers, names, images, ports, resources,
volumes, restart policy), not every rule of Kubernetes' pod validation. Callers pass the field
path of the spec (`spec`, `spec.template.spec`, ...) so messages name the field as kubectl
users wrote it. Nothing here knows which workload embeds the spec.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sandbox.errors import Cause
from sandbox.validation import causes, meta, names, quantity
from sandbox.validation.payload import integer, items, mapping, string_map, text

RESTART_POLICIES = ("Always", "OnFailure", "Never")
PROTOCOLS = ("SCTP", "TCP", "UDP")
PULL_POLICIES = ("Always", "IfNotPresent", "Never")


def validate_pod(obj: Mapping[str, Any]) -> list[Cause]:
    return validate_pod_spec(mapping(obj, "spec"), path="spec")


def validate_pod_template(
    template: Mapping[str, Any], path: str, *, claim_volumes: Iterable[str] = ()
) -> list[Cause]:
    """A pod template: its labels and annotations, then its spec. `claim_volumes` are volume
    names the owner adds to each pod (a StatefulSet's volumeClaimTemplates), so mounts may
    name them."""
    template_meta = mapping(template, "metadata")
    found = meta.validate_labels(
        string_map(template_meta, "labels"), path=f"{path}.metadata.labels"
    )
    found += meta.validate_annotations(
        string_map(template_meta, "annotations"), path=f"{path}.metadata.annotations"
    )
    spec = mapping(template, "spec")
    return found + validate_pod_spec(spec, path=f"{path}.spec", claim_volumes=claim_volumes)


def validate_pod_spec(
    spec: Mapping[str, Any], path: str, *, claim_volumes: Iterable[str] = ()
) -> list[Cause]:
    volumes, found = _volumes(spec, f"{path}.volumes")
    volumes |= set(claim_volumes)
    if not items(spec, "containers"):
        found.append(causes.required(f"{path}.containers"))
    seen: set[str] = set()  # container names are unique across init and regular containers
    for group in ("initContainers", "containers"):
        for i, container in enumerate(items(spec, group)):
            found += _container(container, f"{path}.{group}[{i}]", seen=seen, volumes=volumes)
    policy = spec.get("restartPolicy")
    if policy is not None and policy not in RESTART_POLICIES:
        found.append(causes.not_supported(f"{path}.restartPolicy", policy, RESTART_POLICIES))
    return found


def _volumes(spec: Mapping[str, Any], path: str) -> tuple[set[str], list[Cause]]:
    declared: set[str] = set()
    found: list[Cause] = []
    for i, volume in enumerate(items(spec, "volumes")):
        name = text(volume, "name")
        if not name:
            found.append(causes.required(f"{path}[{i}].name"))
            continue
        found += causes.invalid_each(f"{path}[{i}].name", name, names.dns1123_label(name))
        if name in declared:
            found.append(causes.duplicate(f"{path}[{i}].name", name))
        declared.add(name)
    return declared, found


def _container(
    container: Mapping[str, Any], path: str, *, seen: set[str], volumes: set[str]
) -> list[Cause]:
    found: list[Cause] = []
    name = text(container, "name")
    if not name:
        found.append(causes.required(f"{path}.name"))
    else:
        found += causes.invalid_each(f"{path}.name", name, names.dns1123_label(name))
        if name in seen:
            found.append(causes.duplicate(f"{path}.name", name))
        seen.add(name)
    image = text(container, "image")
    if not image:
        found.append(causes.required(f"{path}.image"))
    elif image != image.strip():
        found.append(
            causes.invalid(f"{path}.image", image, "must not have leading or trailing whitespace")
        )
    pull = container.get("imagePullPolicy")
    if pull is not None and pull not in PULL_POLICIES:
        found.append(causes.not_supported(f"{path}.imagePullPolicy", pull, PULL_POLICIES))
    found += _container_ports(container, f"{path}.ports")
    found += _env(container, f"{path}.env")
    found += _resources(mapping(container, "resources"), f"{path}.resources")
    found += _mounts(container, f"{path}.volumeMounts", volumes=volumes)
    return found


def _container_ports(container: Mapping[str, Any], path: str) -> list[Cause]:
    found: list[Cause] = []
    port_names: set[str] = set()
    for i, port in enumerate(items(container, "ports")):
        at = f"{path}[{i}]"
        name = text(port, "name")
        if name:
            found += causes.invalid_each(f"{at}.name", name, names.port_name(name))
            if name in port_names:
                found.append(causes.duplicate(f"{at}.name", name))
            port_names.add(name)
        number = integer(port, "containerPort") or 0
        if number == 0:
            found.append(causes.required(f"{at}.containerPort"))
        else:
            found += causes.invalid_each(f"{at}.containerPort", number, names.port_number(number))
        host = integer(port, "hostPort") or 0
        if host:
            found += causes.invalid_each(f"{at}.hostPort", host, names.port_number(host))
        found += protocol(port, path=f"{at}.protocol")
    return found


def protocol(port: Mapping[str, Any], path: str) -> list[Cause]:
    """An absent protocol is fine: the API server defaults it to TCP."""
    value = port.get("protocol")
    if value is None or value in PROTOCOLS:
        return []
    return [causes.not_supported(path, value, PROTOCOLS)]


def _env(container: Mapping[str, Any], path: str) -> list[Cause]:
    return [
        causes.required(f"{path}[{i}].name")
        for i, var in enumerate(items(container, "env"))
        if not text(var, "name")
    ]


def _resources(resources: Mapping[str, Any], path: str) -> list[Cause]:
    found: list[Cause] = []
    amounts: dict[str, dict[str, Any]] = {}
    for kind in ("limits", "requests"):
        for resource, raw in mapping(resources, kind).items():
            at = f"{path}.{kind}[{resource}]"
            value = quantity.parse(raw)
            if value is None:
                found.append(causes.invalid(at, raw, quantity.FORMAT_ERROR))
            elif value < 0:
                found.append(causes.invalid(at, raw, causes.NONNEGATIVE))
            else:
                amounts.setdefault(kind, {})[resource] = (value, raw)
    limits = amounts.get("limits", {})
    for resource, (requested, raw) in amounts.get("requests", {}).items():
        if resource in limits and requested > limits[resource][0]:
            detail = f"must be less than or equal to {resource} limit of {limits[resource][1]}"
            found.append(causes.invalid(f"{path}.requests[{resource}]", raw, detail))
    return found


def _mounts(container: Mapping[str, Any], path: str, *, volumes: set[str]) -> list[Cause]:
    found: list[Cause] = []
    for i, mount in enumerate(items(container, "volumeMounts")):
        name = text(mount, "name")
        if not name:
            found.append(causes.required(f"{path}[{i}].name"))
        elif name not in volumes:
            found.append(causes.not_found(f"{path}[{i}].name", name))
        if not text(mount, "mountPath"):
            found.append(causes.required(f"{path}[{i}].mountPath"))
    return found
