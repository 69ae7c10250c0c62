"""Rows for the kinds that route traffic: Services, Endpoints, EndpointSlices, Ingresses,
IngressClasses and NetworkPolicies.

The server renders wide, so load-balancer addresses are never clipped. A missing `spec.type`
reads as ClusterIP and a missing port protocol as TCP, the API's defaults. Reads object JSON only.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from sandbox.tables.cells import (
    NONE,
    capped,
    format_labels,
    format_selector,
    items,
    join_host_port,
    load_balancer_addresses,
    sub,
)
from sandbox.tables.printer import AGE, NAME, Column, Printer, age_of, name_of, wide


def _cluster_ip(spec: Mapping[str, Any]) -> str:
    ips = items(spec, "clusterIPs")
    return str(ips[0]) if ips else str(spec.get("clusterIP") or NONE)


def _external_ip(spec: Mapping[str, Any], status: Mapping[str, Any], kind: str) -> str:
    external = [str(ip) for ip in items(spec, "externalIPs")]
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) or NONE
    if kind == "LoadBalancer":
        balancer = load_balancer_addresses(items(sub(status, "loadBalancer"), "ingress"))
        if external:
            return ",".join([*(balancer.split(",") if balancer else []), *external])
        return balancer or "<pending>"
    if kind == "ExternalName":
        return str(spec.get("externalName", ""))
    return "<unknown>"


def _ports(spec: Mapping[str, Any]) -> str:
    pieces = []
    for port in items(spec, "ports"):
        protocol = port.get("protocol") or "TCP"
        node_port = port.get("nodePort") or 0
        number = port.get("port", 0)
        pieces.append(f"{number}:{node_port}/{protocol}" if node_port else f"{number}/{protocol}")
    return ",".join(pieces) or NONE


def _service(obj: dict[str, Any], now: float) -> list[Any]:
    spec, status = sub(obj, "spec"), sub(obj, "status")
    kind = str(spec.get("type") or "ClusterIP")
    return [
        name_of(obj),
        kind,
        _cluster_ip(spec),
        _external_ip(spec, status, kind),
        _ports(spec),
        age_of(obj, now),
        format_labels(spec.get("selector")),
    ]


def _endpoint_addresses(subsets: list[Any]) -> Iterator[str]:
    for subset in subsets:
        addresses = [str(a.get("ip", "")) for a in items(subset, "addresses")]
        ports = items(subset, "ports")
        if not ports:
            yield from addresses  # headless services may have no ports
        for port in ports:
            for ip in addresses:
                yield join_host_port(ip, port.get("port", 0))


def _endpoints(obj: dict[str, Any], now: float) -> list[Any]:
    subsets = items(obj, "subsets")
    text = capped(_endpoint_addresses(subsets), empty="") if subsets else NONE
    return [name_of(obj), text, age_of(obj, now)]


def _slice_port(port: Mapping[str, Any]) -> str:
    if port.get("port") is not None:
        return str(port["port"])
    return str(port["name"]) if port.get("name") is not None else "*"


def _endpoint_slice(obj: dict[str, Any], now: float) -> list[Any]:
    ports = (_slice_port(p) for p in items(obj, "ports"))
    addresses = (str(a) for e in items(obj, "endpoints") for a in items(e, "addresses"))
    return [
        name_of(obj),
        str(obj.get("addressType", "")),
        capped(ports),
        capped(addresses),
        age_of(obj, now),
    ]


def _hosts(rules: list[Any]) -> str:
    hosts: list[str] = []
    more = False
    for rule in rules:
        # Kubernetes counts every rule after the third host as "more", hostless ones included.
        if len(hosts) == 3:
            more = True
            break
        if rule.get("host"):
            hosts.append(str(rule["host"]))
    if not hosts:
        return "*"
    text = ",".join(hosts)
    return f"{text} + {len(rules) - 3} more..." if more else text


def _ingress(obj: dict[str, Any], now: float) -> list[Any]:
    spec = sub(obj, "spec")
    return [
        name_of(obj),
        spec.get("ingressClassName") or NONE,
        _hosts(items(spec, "rules")),
        load_balancer_addresses(items(sub(obj, "status", "loadBalancer"), "ingress")),
        "80, 443" if items(spec, "tls") else "80",
        age_of(obj, now),
    ]


def _ingress_class(obj: dict[str, Any], now: float) -> list[Any]:
    spec = sub(obj, "spec")
    parameters = NONE
    if spec.get("parameters") is not None:
        ref = sub(spec, "parameters")
        group = f".{ref['apiGroup']}" if ref.get("apiGroup") is not None else ""
        parameters = f"{ref.get('kind', '')}{group}/{ref.get('name', '')}"
    return [name_of(obj), str(spec.get("controller", "")), parameters, age_of(obj, now)]


def _network_policy(obj: dict[str, Any], now: float) -> list[Any]:
    return [name_of(obj), format_selector(sub(obj, "spec", "podSelector")), age_of(obj, now)]


PRINTERS: Mapping[tuple[str, str], Printer] = {
    ("", "Service"): Printer(
        (
            NAME,
            Column("Type", "How the service is exposed."),
            Column("Cluster-IP", "The service's virtual IP inside the cluster."),
            Column("External-IP", "Addresses reachable from outside the cluster."),
            Column("Port(s)", "Service ports, with node ports where allocated."),
            AGE,
            wide("Selector", "Labels of the pods the service routes to."),
        ),
        _service,
    ),
    ("", "Endpoints"): Printer(
        (NAME, Column("Endpoints", "Ready addresses behind the service."), AGE), _endpoints
    ),
    ("discovery.k8s.io", "EndpointSlice"): Printer(
        (
            NAME,
            Column("AddressType", "The address family of the slice."),
            Column("Ports", "Ports exposed by the endpoints."),
            Column("Endpoints", "Addresses of the endpoints."),
            AGE,
        ),
        _endpoint_slice,
    ),
    ("networking.k8s.io", "Ingress"): Printer(
        (
            NAME,
            Column("Class", "The IngressClass that implements this ingress."),
            Column("Hosts", "Hosts the rules match."),
            Column("Address", "Addresses of the load balancer."),
            Column("Ports", "Ports the ingress listens on."),
            AGE,
        ),
        _ingress,
    ),
    ("networking.k8s.io", "IngressClass"): Printer(
        (
            NAME,
            Column("Controller", "The controller that handles this class."),
            Column("Parameters", "The resource carrying extra configuration."),
            AGE,
        ),
        _ingress_class,
    ),
    ("networking.k8s.io", "NetworkPolicy"): Printer(
        (NAME, Column("Pod-Selector", "Labels of the pods the policy applies to."), AGE),
        _network_policy,
    ),
}
