"""What the two endpoint controllers share: a Service with a selector as the primary, the pods it
selects, and how one pod answers the Service's ports.

A Service's selected pods come from a `SelectorIndex`, so a pod change maps to the Services that
select it without a namespace scan. A Service port reaches a pod port by number or by a
container port's name (same protocol); a pod that answers none of a Service's ports stands
behind it nowhere. A Service without a selector, or of type ExternalName, has no endpoints
managed for it. Both `endpoints.py` and `endpointslices.py` build on this; it writes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

from sandbox.control.runtime import PODS, Context, Controller, Item
from sandbox.control.selecting import SelectorIndex
from sandbox.selectors import LabelSelector
from sandbox.store import Change, Key, Obj

SERVICES: Key = ("", "services")
HEADLESS_LABEL = "service.kubernetes.io/headless"


def service_selector(service: Obj) -> LabelSelector | None:
    """The selector of a Service that has endpoints managed for it, else None."""
    spec = service.get("spec") or {}
    selector = spec.get("selector")
    if not selector or spec.get("type") == "ExternalName":
        return None
    return LabelSelector.from_object({"matchLabels": selector})


def _pod_ip(pod: Obj) -> str | None:
    status = pod.get("status") or {}
    ip: str | None = status.get("podIP") or None
    return ip


def _pod_finished(pod: Obj) -> bool:
    status = pod.get("status") or {}
    return status.get("phase") in ("Succeeded", "Failed")


def backends(service: Obj, pods: Iterable[Obj]) -> Iterator[tuple[Obj, str, list[dict[str, Any]]]]:
    """(pod, IP, endpoint ports) of each pod that can stand behind the Service: it has an IP, has
    not finished, and answers one of the Service's ports (any pod, when the Service has none)."""
    for pod in pods:
        ip = _pod_ip(pod)
        if ip is None or _pod_finished(pod):
            continue
        ports = _resolved_ports(pod, service)
        if ports is not None:
            yield pod, ip, ports


def find_port(pod: Obj, service_port: dict[str, Any]) -> int | None:
    """The pod port a Service port sends to: a number as is, a name looked up among the
    containers' ports (same protocol); None when no container has that name."""
    target = service_port.get("targetPort", service_port.get("port"))
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    protocol = service_port.get("protocol", "TCP")
    for container in (pod.get("spec") or {}).get("containers") or []:
        for port in container.get("ports") or []:
            if port.get("name") == target and port.get("protocol", "TCP") == protocol:
                return int(port["containerPort"])
    return None


def endpoint_port(service_port: dict[str, Any], number: int) -> dict[str, Any]:
    port: dict[str, Any] = {"port": number, "protocol": service_port.get("protocol", "TCP")}
    if service_port.get("name"):
        port["name"] = service_port["name"]
    if service_port.get("appProtocol"):
        port["appProtocol"] = service_port["appProtocol"]
    return port


def target_ref(pod: Obj) -> dict[str, str]:
    meta = pod["metadata"]
    return {"kind": "Pod", "namespace": meta["namespace"], "name": meta["name"], "uid": meta["uid"]}


def pod_hostname(pod: Obj, service: Obj) -> str | None:
    spec = pod.get("spec") or {}
    if spec.get("hostname") and spec.get("subdomain") == service["metadata"]["name"]:
        return str(spec["hostname"])
    return None


def _resolved_ports(pod: Obj, service: Obj) -> list[dict[str, Any]] | None:
    """The endpoint ports of `pod` for every Service port it can serve; None if it serves none
    while the Service has ports."""
    service_ports = (service.get("spec") or {}).get("ports") or []
    ports = []
    for service_port in service_ports:
        number = find_port(pod, service_port)
        if number is not None:
            ports.append(endpoint_port(service_port, number))
    if service_ports and not ports:
        return None
    return ports


def port_key(port: dict[str, Any]) -> tuple[str, int, str]:
    return (port.get("name", ""), port["port"], port["protocol"])


def address_key(address: dict[str, Any]) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in address["ip"].split("."))
    except ValueError:
        return (0,)


class ServiceController(Controller):
    """What both endpoint controllers share: Services as primaries, pods mapped by selector."""

    primary = SERVICES
    watches: ClassVar[tuple[Key, ...]] = (PODS,)

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.selecting = SelectorIndex(ctx.store, SERVICES, service_selector)

    def items_for(self, change: Change) -> Iterable[Item]:
        if change.key == SERVICES:
            return [(change.namespace, change.name)]
        if change.key == PODS:
            return [(change.namespace, n) for n in self.selecting.on_pod_change(change)]
        return self.other_items(change)

    def other_items(self, change: Change) -> Iterable[Item]:
        return ()

    def selected_pods(self, service: Obj, selector: LabelSelector) -> list[Obj]:
        meta = service["metadata"]
        return self.selecting.pods(meta["namespace"], meta["name"], selector)
