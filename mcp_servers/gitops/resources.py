"""From a manifest's apiVersion and kind to the API path of its object, by discovery.

The cluster says which resources a group version serves and whether each is namespaced
(`/api/v1`, `/apis/<group>/<version>`); one answer per group version is kept for the life of a
`Resources`, which lives for one sync or drift call, so a CRD installed meanwhile is seen next
time. Its API is `watched`, so each Secret it reads or writes is known to the call's scrubbing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from core.connection import Api
from core.errors import InvalidArgument, NotFound
from mcp_servers.common import arguments
from mcp_servers.common.watched import watched


@dataclass(frozen=True)
class Resource:
    api_version: str
    kind: str
    plural: str
    namespaced: bool

    def collection(self, namespace: str) -> str:
        base = "/api/v1" if self.api_version == "v1" else f"/apis/{self.api_version}"
        if self.namespaced:
            return f"{base}/namespaces/{quote(namespace)}/{self.plural}"
        return f"{base}/{self.plural}"

    def everywhere(self) -> str:
        """The collection across all namespaces (for listing)."""
        base = "/api/v1" if self.api_version == "v1" else f"/apis/{self.api_version}"
        return f"{base}/{self.plural}"

    def path(self, namespace: str, name: str) -> str:
        return f"{self.collection(namespace)}/{quote(name)}"


@dataclass
class Resources:
    api: Api
    default_namespace: str
    _known: dict[str, dict[str, Resource]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.api = watched(self.api)

    def lookup(self, api_version: str, kind: str) -> Resource:
        if api_version not in self._known:
            if not api_version or api_version.count("/") > 1 or " " in api_version:
                raise InvalidArgument(f"apiVersion {api_version!r} is not a group version")
            base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
            listing = self.api.get(base, what=f"API group version {api_version}")
            self._known[api_version] = {
                r["kind"]: Resource(api_version, r["kind"], r["name"], bool(r["namespaced"]))
                for r in listing.get("resources", [])
                if "/" not in r["name"]
            }
        found = self._known[api_version].get(kind)
        if found is None:
            raise NotFound(f"the cluster serves no {kind} in {api_version}")
        return found

    def locate(self, obj: dict[str, Any]) -> tuple[Resource, str, str]:
        """The resource, namespace ("" when cluster-scoped) and name of a manifest object."""
        resource = self.lookup(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
        meta = obj.get("metadata") or {}
        name = arguments.name(str(meta.get("name") or ""), argument="metadata.name")
        namespace = ""
        if resource.namespaced:
            namespace = arguments.namespace(str(meta.get("namespace") or self.default_namespace))
        return resource, namespace, name
