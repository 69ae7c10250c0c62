"""Turning what a person types (`deploy`, `po`, `svc`, `Deployment`, `deployments.apps`) into an
API resource and its URL paths, the way kubectl does: from the cluster's discovery documents.

Discovery is read once per context and kept (`Resources` is per-context; `Catalog` holds one per
context), so a tool call costs one request, not a discovery round. Nothing here is hard-coded to
a list of kinds: custom resources and aggregated APIs (metrics.k8s.io) resolve the same way.
When a name matches resources in several groups, the core and well-known groups win, as kubectl's
priority order does; `plural.group` picks one explicitly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.connection import Api
from core.errors import NotFound, PermissionDenied
from mcp_servers.common import arguments

# Groups preferred when a short name or kind is ambiguous (the built-ins before extensions).
_PREFERRED = ("", "apps", "batch", "autoscaling", "networking.k8s.io", "policy")


@dataclass(frozen=True)
class Resource:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def label(self) -> str:
        """What error messages call it: `deployments.apps`, `pods`."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        return f"{base}/{name}" if name else base


@dataclass
class Resources:
    """The resources one context's discovery lists (preferred version of each group)."""

    items: list[Resource]

    @classmethod
    def discover(cls, api: Api) -> Resources:
        found: list[Resource] = []
        for version in api.get("/api").get("versions", ["v1"]):
            found += _resources(api, f"/api/{version}", "", version)
        for group in api.get("/apis").get("groups", []):
            preferred = group.get("preferredVersion") or group["versions"][0]
            found += _resources(
                api, f"/apis/{preferred['groupVersion']}", group["name"], preferred["version"]
            )
        return cls(found)

    def resolve(self, what: str) -> Resource:
        arguments.kind(what, argument="kind")
        wanted = what.lower()
        name, _, group = wanted.partition(".")
        matches = [
            r
            for r in self.items
            if (not group or r.group == group)
            and name in (r.plural, r.kind.lower(), *r.short_names)
        ]
        if not matches:
            raise NotFound(
                f"the cluster has no resource type {what!r}; use a kind (Deployment), a plural "
                "(deployments) or a short name (deploy), as kubectl api-resources lists them"
            )
        return min(matches, key=_priority)

    def by_kind(self, api_version: str, kind: str) -> Resource | None:
        group = api_version.rpartition("/")[0]
        for r in self.items:
            if r.kind == kind and r.group == group:
                return r
        return None


def _resources(api: Api, path: str, group: str, version: str) -> list[Resource]:
    try:
        listing = api.get(path)
    except (NotFound, PermissionDenied):
        return []  # an aggregated API that is down, or hidden from this identity
    return [
        Resource(
            group=group,
            version=version,
            plural=r["name"],
            kind=r["kind"],
            namespaced=bool(r.get("namespaced")),
            short_names=tuple(r.get("shortNames") or ()),
            verbs=tuple(r.get("verbs") or ()),
        )
        for r in listing.get("resources", [])
        if "/" not in r["name"]  # subresources (pods/log, deployments/scale) are not listable
    ]


def _priority(resource: Resource) -> tuple[int, str]:
    rank = _PREFERRED.index(resource.group) if resource.group in _PREFERRED else len(_PREFERRED)
    return rank, resource.group


@dataclass
class Catalog:
    """Discovery per context, read on first use and kept for the life of the server."""

    _by_context: dict[str, Resources] = field(default_factory=dict)

    def resources(self, api: Api) -> Resources:
        if api.context not in self._by_context:
            self._by_context[api.context] = Resources.discover(api)
        return self._by_context[api.context]

    def resolve(self, api: Api, what: str) -> Resource:
        try:
            return self.resources(api).resolve(what)
        except NotFound:
            # A CRD installed since discovery was read: look again once before giving up.
            self._by_context.pop(api.context, None)
            return self.resources(api).resolve(what)
