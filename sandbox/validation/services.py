"""Rules for Service specs: type, cluster IP, ports, external name, session affinity, selector.

The port rules depend on the type (node ports are forbidden on ClusterIP services; ports are
optional for ExternalName and headless services), which is why they live apart from pod ports.
Cluster IP allocation is not validation and is not done here.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from sandbox.errors import Cause
from sandbox.validation import causes, meta, names, pods
from sandbox.validation.payload import integer, items, mapping, string_map, strings, text

SERVICE_TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
SESSION_AFFINITIES = ("ClientIP", "None")
_IP_EXAMPLE = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"


def validate_service(obj: Mapping[str, Any]) -> list[Cause]:
    spec = mapping(obj, "spec")
    kind = spec.get("type") or "ClusterIP"
    found: list[Cause] = []
    if kind not in SERVICE_TYPES:
        found.append(causes.not_supported("spec.type", kind, SERVICE_TYPES))
    if kind == "ExternalName":
        found += _external_name(spec)
    else:
        found += _cluster_ip(spec, kind)
    ports = items(spec, "ports")
    headless = text(spec, "clusterIP") == "None"
    if not ports and not headless and kind != "ExternalName":
        found.append(causes.required("spec.ports"))
    found += _ports(ports, kind)
    affinity = spec.get("sessionAffinity")
    if affinity is not None and affinity not in SESSION_AFFINITIES:
        found.append(causes.not_supported("spec.sessionAffinity", affinity, SESSION_AFFINITIES))
    return found + meta.validate_labels(string_map(spec, "selector"), path="spec.selector")


def _external_name(spec: Mapping[str, Any]) -> list[Cause]:
    found: list[Cause] = []
    if text(spec, "clusterIP") or strings(spec, "clusterIPs"):
        found.append(
            causes.forbidden("spec.clusterIPs", "may not be set for ExternalName services")
        )
    # A trailing dot marks the name as fully qualified; it is not part of the DNS check.
    cname = text(spec, "externalName").removesuffix(".")
    if not cname:
        return [*found, causes.required("spec.externalName")]
    return found + causes.invalid_each("spec.externalName", cname, names.dns1123_subdomain(cname))


def _is_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


def _cluster_ip(spec: Mapping[str, Any], kind: str) -> list[Cause]:
    found: list[Cause] = []
    address = text(spec, "clusterIP")
    if address == "None" and kind in ("NodePort", "LoadBalancer"):
        found.append(
            causes.invalid(
                "spec.clusterIP", address, f"may not be set to 'None' for {kind} services"
            )
        )
    elif address and address != "None" and not _is_ip(address):
        found.append(causes.invalid("spec.clusterIP", address, _IP_EXAMPLE))
    addresses = strings(spec, "clusterIPs")
    if address and addresses and addresses[0] != address:
        found.append(
            causes.invalid("spec.clusterIPs", addresses, "first value must match `clusterIP`")
        )
    return found


def _ports(ports: list[Mapping[str, Any]], kind: str) -> list[Cause]:
    found: list[Cause] = []
    port_names: set[str] = set()
    pairs: set[tuple[str, int]] = set()
    for i, port in enumerate(ports):
        at = f"spec.ports[{i}]"
        found += _port_name(text(port, "name"), f"{at}.name", named=len(ports) > 1, seen=port_names)
        number = integer(port, "port") or 0
        found += causes.invalid_each(f"{at}.port", number, names.port_number(number))
        found += pods.protocol(port, path=f"{at}.protocol")
        found += _target_port(port.get("targetPort"), f"{at}.targetPort")
        found += _node_port(integer(port, "nodePort") or 0, f"{at}.nodePort", kind)
        pair = (text(port, "protocol") or "TCP", number)
        if pair in pairs:
            found.append(causes.duplicate(at, {"port": number, "protocol": pair[0]}))
        pairs.add(pair)
    return found


def _port_name(name: str, path: str, *, named: bool, seen: set[str]) -> list[Cause]:
    if not name:
        # One port may stay anonymous; with several, each needs a name to be told apart.
        return [causes.required(path)] if named else []
    found = causes.invalid_each(path, name, names.dns1123_label(name))
    if name in seen:
        found.append(causes.duplicate(path, name))
    seen.add(name)
    return found


def _target_port(value: object, path: str) -> list[Cause]:
    if isinstance(value, str):
        return causes.invalid_each(path, value, names.port_name(value))
    if isinstance(value, int) and not isinstance(value, bool) and value != 0:
        return causes.invalid_each(path, value, names.port_number(value))
    return []  # absent or 0: the API server defaults it to the service port


def _node_port(value: int, path: str, kind: str) -> list[Cause]:
    if not value:
        return []
    if kind == "ClusterIP":
        return [causes.forbidden(path, "may not be used when `type` is 'ClusterIP'")]
    return causes.invalid_each(path, value, names.port_number(value))
