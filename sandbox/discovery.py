"""API discovery, in both the per-group form and the aggregated (apidiscovery.k8s.io/v2) form.

kubectl 1.37 asks for aggregated discovery first and falls back to per-group documents; the Python
dynamic client uses the per-group form. Both are generated from the registry and cached until the
registry changes (a CRD appears or goes, or the control plane's version changes which deprecated
versions are served: they are listed after their group's preferred version, as on a real server).
"""

from __future__ import annotations

from typing import Any

from sandbox.registry import Registry, ResourceType

AGGREGATED_CONTENT_TYPE = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

# (kind, group, version, verbs) of each subresource as Kubernetes serves it; None = the parent's.
_SUBRESOURCES: dict[str, tuple[str | None, str | None, str | None, tuple[str, ...]]] = {
    "status": (None, None, None, ("get", "patch", "update")),
    "scale": ("Scale", "autoscaling", "v1", ("get", "patch", "update")),
    "log": (None, None, None, ("get",)),
    "eviction": ("Eviction", "policy", "v1", ("create",)),
    "binding": ("Binding", "", "v1", ("create",)),
    "token": ("TokenRequest", "authentication.k8s.io", "v1", ("create",)),
    "finalize": (None, None, None, ("update",)),
    "exec": ("PodExecOptions", None, None, ("create", "get")),
    "attach": ("PodAttachOptions", None, None, ("create", "get")),
    "portforward": ("PodPortForwardOptions", None, None, ("create", "get")),
}


def wants_aggregated(accept: str) -> bool:
    return "as=APIGroupDiscoveryList" in accept and "v=v2" in accept


class Discovery:
    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._cache: dict[str, tuple[int, dict[str, Any]]] = {}

    def _cached(self, which: str) -> dict[str, Any]:
        generation = self.registry.generation
        hit = self._cache.get(which)
        if hit is None or hit[0] != generation:
            doc = (
                _group_list(self.registry)
                if which == "groups"
                else _aggregated(self.registry, core=(which == "core"))
            )
            hit = self._cache[which] = (generation, doc)
        return hit[1]

    def core_versions(self, server_address: str) -> dict[str, Any]:
        return {
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [
                {"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}
            ],
        }

    def groups(self) -> dict[str, Any]:
        return self._cached("groups")

    def group(self, name: str) -> dict[str, Any] | None:
        for group in self.groups()["groups"]:
            if group["name"] == name:
                return {"kind": "APIGroup", "apiVersion": "v1", **group}
        return None

    def resources(self, group: str, version: str) -> dict[str, Any] | None:
        types = self.registry.in_group_version(group, version)
        if not types:
            return None
        return {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": f"{group}/{version}" if group else version,
            "resources": [entry for rt in types for entry in _resource_entries(rt)],
        }

    def aggregated(self, *, core: bool) -> dict[str, Any]:
        return self._cached("core" if core else "apis")


def _group_list(registry: Registry) -> dict[str, Any]:
    groups = []
    for name, versions in registry.group_versions().items():
        if not name:
            continue
        entries = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
        groups.append({"name": name, "versions": entries, "preferredVersion": entries[0]})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def _aliases(rt: ResourceType) -> dict[str, list[str]]:
    """shortNames and categories, present only when the type has them (both forms agree)."""
    aliases = {"shortNames": list(rt.short_names), "categories": list(rt.categories)}
    return {key: value for key, value in aliases.items() if value}


def _resource_entries(rt: ResourceType) -> list[dict[str, Any]]:
    main: dict[str, Any] = {
        "name": rt.plural,
        "singularName": rt.singular_name,
        "namespaced": rt.namespaced,
        "kind": rt.kind,
        "verbs": list(rt.verbs),
        **_aliases(rt),
    }
    entries = [main]
    for sub in rt.subresources:
        kind, group, version, verbs = _SUBRESOURCES[sub]
        entry: dict[str, Any] = {
            "name": f"{rt.plural}/{sub}",
            "singularName": "",
            "namespaced": rt.namespaced,
            "kind": kind or rt.kind,
            "verbs": list(verbs),
        }
        if group is not None:
            entry["group"], entry["version"] = group, version
        entries.append(entry)
    return entries


def _aggregated(registry: Registry, *, core: bool) -> dict[str, Any]:
    items = []
    for name, versions in registry.group_versions().items():
        if bool(name) == core:
            continue
        items.append(
            {
                "metadata": {"name": name} if name else {},
                "versions": [
                    {
                        "version": v,
                        "resources": [
                            _aggregated_resource(rt) for rt in registry.in_group_version(name, v)
                        ],
                        "freshness": "Current",
                    }
                    for v in versions
                ],
            }
        )
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    }


def _aggregated_resource(rt: ResourceType) -> dict[str, Any]:
    resource: dict[str, Any] = {
        "resource": rt.plural,
        "responseKind": {"group": rt.group, "version": rt.version, "kind": rt.kind},
        "scope": "Namespaced" if rt.namespaced else "Cluster",
        "singularResource": rt.singular_name,
        "verbs": list(rt.verbs),
        **_aliases(rt),
    }
    subs = []
    for sub in rt.subresources:
        kind, group, version, verbs = _SUBRESOURCES[sub]
        subs.append(
            {
                "subresource": sub,
                "responseKind": {
                    "group": rt.group if group is None else group,
                    "version": version or rt.version,
                    "kind": kind or rt.kind,
                },
                "verbs": list(verbs),
            }
        )
    if subs:
        resource["subresources"] = subs
    return resource
