"""Admission: what the API server does to an object between decoding and validation.

- namespaced writes need an existing, non-terminating namespace;
- built-in defaults (the fields Kubernetes fills so `-o yaml` and controllers see them);
- Services get a ClusterIP (and node ports) from the sandbox's service range;
- a PersistentVolumeClaim may grow only when bound and its StorageClass allows expansion;
- a CustomResourceDefinition registers or updates its resource type when committed, and
  unregisters (deleting its objects) when it goes.
- Cluster API kinds get the defaults and checks of Cluster API's webhooks
  (`sandbox.clusterapi.webhooks`).

Each hook is `hook(objects, rt, obj, old) -> obj` and may not mutate `obj` in place.
"""

from __future__ import annotations

import copy
import ipaddress
from typing import Any

from sandbox import defaults
from sandbox.clusterapi import webhooks
from sandbox.errors import Forbidden, not_found
from sandbox.objects import Objects
from sandbox.quantity import units
from sandbox.registry import ResourceType
from sandbox.store import Obj

SERVICE_RANGE = ipaddress.ip_network("10.96.0.0/16")
NODE_PORT_RANGE = range(30000, 32768)
_NAMESPACES = ("", "namespaces")
CRD_KEY = ("apiextensions.k8s.io", "customresourcedefinitions")
_CLAIMS = ("", "persistentvolumeclaims")
_STORAGE_CLASSES = ("storage.k8s.io", "storageclasses")


def install(objects: Objects) -> None:
    objects.admit.extend(
        [
            namespace_exists,
            apply_defaults,
            allocate_service_addresses,
            claim_resize,
            crd_status,
            webhooks.admit,
        ]
    )
    objects.on_commit.append(lambda rt, new, old: register_crd(objects, rt, new))
    crds = objects.registry.for_group(*CRD_KEY)
    assert crds is not None, "the CustomResourceDefinition type is built in"
    for crd in objects.store.list(CRD_KEY):  # a restarted sandbox serves its CRDs again
        register_crd(objects, crds, crd)


def namespace_exists(objects: Objects, rt: ResourceType, obj: Obj, old: Obj | None) -> Obj:
    if old is not None or not rt.namespaced:
        return obj
    namespace = obj["metadata"].get("namespace", "")
    ns = objects.store.get(_NAMESPACES, "", namespace)
    if ns is None:
        raise not_found("namespaces", "", namespace)
    if ns["metadata"].get("deletionTimestamp"):
        name = obj["metadata"].get("name", "")
        raise Forbidden(
            f'{rt.qualified} "{name}" is forbidden: unable to create new content in namespace '
            f"{namespace} because it is being terminated",
            name=name,
            group=rt.group,
            kind=rt.plural,
        )
    return obj


def apply_defaults(objects: Objects, rt: ResourceType, obj: Obj, old: Obj | None) -> Obj:
    if rt.custom or (old is not None and _only_status_differs(obj, old)):
        return obj  # the rest is old's own, defaulted when it was written
    return defaults.apply(rt.kind, obj, creating=old is None)


def _only_status_differs(obj: Obj, old: Obj) -> bool:
    """Whether everything but status is old's very own objects (a controller's status write:
    stored objects are never mutated, so identity means unchanged). Cheap: no comparison."""
    if obj.keys() - {"status"} != old.keys() - {"status"}:
        return False
    return all(obj[key] is old[key] for key in obj if key != "status")


def allocate_service_addresses(
    objects: Objects, rt: ResourceType, obj: Obj, old: Obj | None
) -> Obj:
    if rt.key != ("", "services"):
        return obj
    spec = dict(obj.get("spec") or {})
    kind = spec.get("type", "ClusterIP")
    old_spec = (old or {}).get("spec") or {}
    if kind not in _NODE_PORTED and old_spec.get("type") in _NODE_PORTED:
        spec["ports"] = _without_kept_node_ports(spec.get("ports") or [], old_spec)
    if kind != "ExternalName" and not spec.get("clusterIP"):
        spec["clusterIP"] = old_spec.get("clusterIP") or _free_cluster_ip(objects)
    if spec.get("clusterIP") and spec["clusterIP"] != "None":
        spec.setdefault("clusterIPs", [spec["clusterIP"]])
    if kind in ("NodePort", "LoadBalancer"):
        used = _used_node_ports(objects)
        ports = []
        for port in spec.get("ports") or []:
            port = dict(port)
            if not port.get("nodePort"):
                port["nodePort"] = next(p for p in NODE_PORT_RANGE if p not in used)
                used.add(port["nodePort"])
            ports.append(port)
        spec["ports"] = ports
    return {**obj, "spec": spec}


_NODE_PORTED = ("NodePort", "LoadBalancer")


def _without_kept_node_ports(ports: list[Obj], old_spec: Obj) -> list[Obj]:
    """A Service moved off NodePort or LoadBalancer loses the node ports it was given (those
    the update left as they were), as the API server drops fields the new type cannot have; a
    node port the update itself sets is kept for validation to refuse."""
    had = {int(p["nodePort"]) for p in old_spec.get("ports") or [] if p.get("nodePort")}
    return [
        {k: v for k, v in port.items() if k != "nodePort"}
        if port.get("nodePort") and int(port["nodePort"]) in had
        else port
        for port in ports
    ]


def claim_resize(objects: Objects, rt: ResourceType, obj: Obj, old: Obj | None) -> Obj:
    """A bigger storage request is an expansion: only for bound claims of expandable classes."""
    if rt.key != _CLAIMS or old is None:
        return obj
    asked, had = _storage_request(obj), _storage_request(old)
    if asked is None or had is None or asked <= had:
        return obj  # shrinking is validation's to refuse
    class_name = (old.get("spec") or {}).get("storageClassName") or ""
    storage_class = objects.store.get(_STORAGE_CLASSES, "", class_name) if class_name else None
    bound = ((old.get("status") or {}).get("phase")) == "Bound"
    if not bound or not (storage_class or {}).get("allowVolumeExpansion"):
        name = obj["metadata"].get("name", "")
        raise Forbidden(
            f'persistentvolumeclaims "{name}" is forbidden: only dynamically provisioned pvc can '
            "be resized and the storageclass that provisions the pvc must support resize",
            name=name,
            kind="persistentvolumeclaims",
        )
    return obj


def _storage_request(claim: Obj) -> int | None:
    requests = ((claim.get("spec") or {}).get("resources") or {}).get("requests") or {}
    try:
        return units(requests["storage"]) if "storage" in requests else None
    except ValueError:
        return None  # validation reports a malformed quantity


def _free_cluster_ip(objects: Objects) -> str:
    used = {(s.get("spec") or {}).get("clusterIP") for s in objects.store.list(("", "services"))}
    for host in SERVICE_RANGE.hosts():
        candidate = str(host)
        if candidate not in used and not candidate.endswith(".1"):
            return candidate
    raise Forbidden("the service IP range 10.96.0.0/16 is exhausted")


def _used_node_ports(objects: Objects) -> set[int]:
    return {
        int(p["nodePort"])
        for s in objects.store.list(("", "services"))
        for p in (s.get("spec") or {}).get("ports") or []
        if p.get("nodePort")
    }


# -- CustomResourceDefinitions ---------------------------------------------------------------


def crd_status(objects: Objects, rt: ResourceType, obj: Obj, old: Obj | None) -> Obj:
    """A CRD is accepted and established as soon as it is valid, as on a healthy server."""
    if rt.key != CRD_KEY:
        return obj
    spec = obj.get("spec") or {}
    names = spec.get("names") or {}
    accepted = {k: v for k, v in names.items()}
    accepted.setdefault("singular", str(names.get("kind", "")).lower())
    accepted.setdefault("listKind", f"{names.get('kind', '')}List")
    now = objects.clock.timestamp()
    conditions = [
        {"type": t, "status": "True", "reason": r, "message": m, "lastTransitionTime": now}
        for t, r, m in (
            ("NamesAccepted", "NoConflicts", "no conflicts found"),
            ("Established", "InitialNamesAccepted", "the initial names have been accepted"),
        )
    ]
    previous = (old or {}).get("status") or {}
    if previous.get("conditions"):
        conditions = previous["conditions"]
    stored = [v["name"] for v in spec.get("versions") or [] if v.get("storage")]
    status = {"conditions": conditions, "acceptedNames": accepted, "storedVersions": stored}
    return {**obj, "status": status}


def register_crd(objects: Objects, rt: ResourceType, crd: Obj) -> None:
    if rt.key != CRD_KEY:
        return
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group, plural = spec.get("group", ""), names.get("plural", "")
    objects.registry.remove(group, plural)
    if crd["metadata"].get("deletionTimestamp"):
        return
    for version in spec.get("versions") or []:
        if not version.get("served", True):
            continue
        schema = copy.deepcopy((version.get("schema") or {}).get("openAPIV3Schema"))
        subresources = tuple(
            s for s in ("status", "scale") if s in (version.get("subresources") or {})
        )
        objects.registry.add(
            ResourceType(
                group=group,
                version=version["name"],
                plural=plural,
                kind=names.get("kind", ""),
                namespaced=spec.get("scope") == "Namespaced",
                singular=names.get("singular", ""),
                short_names=tuple(names.get("shortNames") or ()),
                categories=tuple(names.get("categories") or ()),
                subresources=subresources,
                printer_columns=tuple(version.get("additionalPrinterColumns") or ()),
                schema=schema,
                custom=True,
            )
        )


def unregister_crd(objects: Objects, crd: Obj) -> list[tuple[str, str]]:
    """Forget a deleted CRD's type; returns the storage keys whose objects must go too."""
    spec: dict[str, Any] = crd.get("spec") or {}
    group, plural = spec.get("group", ""), (spec.get("names") or {}).get("plural", "")
    objects.registry.remove(group, plural)
    return [(group, plural)]
