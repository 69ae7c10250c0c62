"""Endpoints (`endpoint-controller`): the core/v1 Endpoints object of the same name as each Service
with a selector.

Ready pods go in `addresses`, the others in `notReadyAddresses` (all in `addresses` with
`publishNotReadyAddresses`); terminating pods are left out unless published. Addresses that
serve the same ports are repacked into one subset, as RepackSubsets does, and past 1000
addresses the object is truncated (ready ones first) and annotated `over-capacity`. A Service
without a selector is left alone: its Endpoints are the user's. The Service and pod side is
`services.py`'s; this module only builds and writes the object.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sandbox.control.readiness import is_ready
from sandbox.control.runtime import PODS, Controller, Item
from sandbox.control.services import (
    HEADLESS_LABEL,
    SERVICES,
    ServiceController,
    address_key,
    backends,
    pod_hostname,
    port_key,
    service_selector,
    target_ref,
)
from sandbox.store import Change, Key, Obj

ENDPOINTS: Key = ("", "endpoints")
MAX_ENDPOINTS_ADDRESSES = 1000


class EndpointsController(ServiceController):
    name = "endpoint-controller"
    watches = (PODS, ENDPOINTS)

    def other_items(self, change: Change) -> Iterable[Item]:
        # A deleted Endpoints object of a selecting Service comes back; other edits wait for the
        # next pod or Service change, as the real controller only watches for its deletion.
        if change.type == "DELETED":
            return [(change.namespace, change.name)]
        return ()

    def reconcile(self, namespace: str, name: str) -> float | None:
        service = self.get(SERVICES, namespace, name)
        if service is None:
            self.selecting.forget(namespace, name)
            self.delete(ENDPOINTS, namespace, name)
            return None
        selector = service_selector(service)
        if selector is None:
            return None
        subsets, truncated = self._subsets(service, self.selected_pods(service, selector))
        labels = dict(service["metadata"].get("labels") or {})
        if (service.get("spec") or {}).get("clusterIP") == "None":
            labels[HEADLESS_LABEL] = ""
        existing = self.get(ENDPOINTS, namespace, name)
        base = existing or {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {"name": name, "namespace": namespace},
        }
        meta = {**base["metadata"]}
        meta.pop("labels", None)
        if labels:
            meta["labels"] = labels
        annotations = {
            k: v
            for k, v in (meta.get("annotations") or {}).items()
            if k != "endpoints.kubernetes.io/over-capacity"
        }
        if truncated:
            annotations["endpoints.kubernetes.io/over-capacity"] = "truncated"
        meta.pop("annotations", None)
        if annotations:
            meta["annotations"] = annotations
        desired = {k: v for k, v in base.items() if k != "subsets"}
        desired["metadata"] = meta
        if subsets:
            desired["subsets"] = subsets
        if existing is None:
            self.create(ENDPOINTS, desired)
        else:
            self.write(ENDPOINTS, desired, existing)
        return None

    def _subsets(self, service: Obj, pods: list[Obj]) -> tuple[list[dict[str, Any]], bool]:
        spec = service.get("spec") or {}
        publish = bool(spec.get("publishNotReadyAddresses"))
        headless_without_ports = not spec.get("ports") and spec.get("clusterIP") == "None"
        # address (as a sorted tuple) -> (ready?, address, ports)
        by_address: list[tuple[bool, dict[str, Any], list[dict[str, Any]]]] = []
        for pod, ip, ports in backends(service, pods):
            if pod["metadata"].get("deletionTimestamp") and not publish:
                continue
            if not ports and not headless_without_ports:
                continue
            address: dict[str, Any] = {"ip": ip}
            if hostname := pod_hostname(pod, service):
                address["hostname"] = hostname
            if node := (pod.get("spec") or {}).get("nodeName"):
                address["nodeName"] = node
            address["targetRef"] = target_ref(pod)
            by_address.append((publish or is_ready(pod), address, ports))
        truncated = len(by_address) > MAX_ENDPOINTS_ADDRESSES
        if truncated:  # ready addresses are kept first, as Kubernetes truncates
            by_address.sort(key=lambda entry: not entry[0])
            by_address = by_address[:MAX_ENDPOINTS_ADDRESSES]
        return _repack(by_address), truncated


def _repack(entries: list[tuple[bool, dict[str, Any], list[dict[str, Any]]]]) -> list[Obj]:
    """Group addresses that serve the same ports into one subset, as RepackSubsets does."""
    groups: dict[tuple[tuple[str, int, str], ...], dict[str, Any]] = {}
    for ready, address, ports in entries:
        ports_key = tuple(sorted(port_key(p) for p in ports))
        group = groups.setdefault(
            ports_key,
            {"ready": [], "notReady": [], "ports": sorted(ports, key=port_key)},
        )
        group["ready" if ready else "notReady"].append(address)
    subsets = []
    for ports_key in sorted(groups):
        group = groups[ports_key]
        subset: dict[str, Any] = {}
        if group["ready"]:
            subset["addresses"] = sorted(group["ready"], key=address_key)
        if group["notReady"]:
            subset["notReadyAddresses"] = sorted(group["notReady"], key=address_key)
        if group["ports"]:
            subset["ports"] = group["ports"]
        subsets.append(subset)
    return subsets


CONTROLLERS: tuple[type[Controller], ...] = (EndpointsController,)
