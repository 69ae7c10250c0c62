"""EndpointSlices (`endpointslice-controller`): discovery.k8s.io/v1 slices owned by each Service
with a selector.

One slice per set of ports, at most 100 endpoints each, every endpoint with its `ready`,
`serving` and `terminating` conditions, node and zone; a Service whose pods qualify for none
keeps one empty slice, as Kubernetes does. Existing slices are reused (same ports first) and
named like `generateName` would; slices the controller no longer needs are deleted, and those of
a deleted Service go with it through the garbage collector. The Service and pod side is
`services.py`'s; this module only builds and writes slices.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sandbox.control.ownership import controller_ref
from sandbox.control.readiness import is_ready
from sandbox.control.runtime import PODS, Controller, Item
from sandbox.control.selecting import labels_of
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
from sandbox.naming import random_suffix
from sandbox.store import Change, Key, Obj

SLICES: Key = ("discovery.k8s.io", "endpointslices")
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by"
MANAGED_BY = "endpointslice-controller.k8s.io"
MAX_ENDPOINTS_PER_SLICE = 100


class EndpointSliceController(ServiceController):
    name = "endpointslice-controller"
    watches = (PODS, SLICES)

    def other_items(self, change: Change) -> Iterable[Item]:
        labels = labels_of(change.object)
        if change.type == "DELETED" and labels.get(MANAGED_BY_LABEL) == MANAGED_BY:
            service = labels.get(SERVICE_NAME_LABEL)
            if service:
                return [(change.namespace, service)]
        return ()

    def reconcile(self, namespace: str, name: str) -> float | None:
        service = self.get(SERVICES, namespace, name)
        if service is None:
            self.selecting.forget(namespace, name)
            return None  # the garbage collector removes its slices (they are owned)
        selector = service_selector(service)
        owned = [
            s
            for s in self.ctx.index.owned(SLICES, service["metadata"]["uid"])
            if labels_of(s).get(MANAGED_BY_LABEL) == MANAGED_BY
        ]
        if selector is None:
            for stale in owned:
                self.delete(SLICES, namespace, stale["metadata"]["name"])
            return None
        desired = self._desired(service, self.selected_pods(service, selector))
        self._converge(service, desired, owned)
        return None

    def _desired(
        self, service: Obj, pods: list[Obj]
    ) -> list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
        """(ports, endpoints) of each slice the Service should have; a placeholder with neither
        when no pod qualifies, as Kubernetes keeps one."""
        publish = bool((service.get("spec") or {}).get("publishNotReadyAddresses"))
        by_ports: dict[tuple[tuple[str, int, str], ...], tuple[list[Any], list[Any]]] = {}
        for pod, ip, ports in backends(service, pods):
            terminating = bool(pod["metadata"].get("deletionTimestamp"))
            serving = is_ready(pod)
            endpoint: dict[str, Any] = {
                "addresses": [ip],
                "conditions": {
                    "ready": publish or (serving and not terminating),
                    "serving": serving,
                    "terminating": terminating,
                },
            }
            if hostname := pod_hostname(pod, service):
                endpoint["hostname"] = hostname
            if node := (pod.get("spec") or {}).get("nodeName"):
                endpoint["nodeName"] = node
                zone = self._zone(node)
                if zone:
                    endpoint["zone"] = zone
            endpoint["targetRef"] = target_ref(pod)
            # A slice port's name is a pointer in Go, always set (to "" when the Service port
            # has none): `kubectl describe service` dereferences it.
            ports = [{"name": "", **port} for port in ports]
            key = tuple(sorted(port_key(p) for p in ports))
            entry = by_ports.setdefault(key, (sorted(ports, key=port_key), []))
            entry[1].append(endpoint)
        desired = []
        for key in sorted(by_ports):
            ports, endpoints = by_ports[key]
            endpoints.sort(key=lambda e: address_key({"ip": e["addresses"][0]}))
            for start in range(0, len(endpoints), MAX_ENDPOINTS_PER_SLICE):
                desired.append((ports, endpoints[start : start + MAX_ENDPOINTS_PER_SLICE]))
        return desired or [([], [])]

    def _zone(self, node: str) -> str | None:
        obj = self.get(("", "nodes"), "", node)
        if obj is None:
            return None
        zone: str | None = labels_of(obj).get("topology.kubernetes.io/zone")
        return zone

    def _converge(
        self,
        service: Obj,
        desired: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]],
        owned: list[Obj],
    ) -> None:
        """Reuse existing slices (same ports first), create what is missing, drop the rest."""
        meta = service["metadata"]
        remaining = list(owned)
        assigned: list[tuple[Obj | None, list[Any], list[Any]]] = []
        for ports, endpoints in desired:
            match = next((s for s in remaining if (s.get("ports") or []) == ports), None)
            if match is not None:
                remaining.remove(match)
            assigned.append((match, ports, endpoints))
        for index, (found, ports, endpoints) in enumerate(assigned):
            if found is None and remaining:
                found = remaining.pop(0)
            body = self._slice(service, found, ports, endpoints, index)
            if found is None:
                self.create(SLICES, body)
            else:
                self.write(SLICES, body, found)
        for stale in remaining:
            self.delete(SLICES, meta["namespace"], stale["metadata"]["name"])

    def _slice(
        self,
        service: Obj,
        existing: Obj | None,
        ports: list[dict[str, Any]],
        endpoints: list[dict[str, Any]],
        index: int,
    ) -> Obj:
        meta = service["metadata"]
        labels = {
            **{
                k: v
                for k, v in labels_of(service).items()
                if k not in (SERVICE_NAME_LABEL, MANAGED_BY_LABEL)
            },
            SERVICE_NAME_LABEL: meta["name"],
            MANAGED_BY_LABEL: MANAGED_BY,
        }
        if (service.get("spec") or {}).get("clusterIP") == "None":
            labels[HEADLESS_LABEL] = ""
        if existing is not None:
            slice_meta = {**existing["metadata"], "labels": labels}
        else:
            rng = self.random(meta["uid"], "slice", index, self.now())
            name = ""
            while not name or self.get(SLICES, meta["namespace"], name) is not None:
                suffix = random_suffix(rng)
                name = f"{meta['name'][:57]}-{suffix}"
            slice_meta = {
                "name": name,
                "generateName": f"{meta['name'][:57]}-",
                "namespace": meta["namespace"],
                "labels": labels,
                "ownerReferences": [controller_ref(service)],
            }
        body: Obj = {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": slice_meta,
            "addressType": "IPv4",
            "endpoints": endpoints,
        }
        if ports:
            body["ports"] = ports
        return body


CONTROLLERS: tuple[type[Controller], ...] = (EndpointSliceController,)
