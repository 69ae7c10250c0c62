"""Map a request path and method onto what it addresses: a discovery document, an OpenAPI
document, or a resource (type, namespace, name, subresource) plus the Kubernetes verb.

The verb is the one RBAC and audit speak (`get`, `list`, `watch`, `create`, `update`, `patch`,
`delete`, `deletecollection`), derived exactly as kube-apiserver derives it. A resource route's
`rt` is the type its objects are stored as; its `version` is the path's, which differs for a
deprecated version served as an alias (sandbox.deprecations), and a version the control plane
no longer serves is not found, as on a real server. `/metrics` is the API server's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sandbox.errors import MethodNotAllowed, NotFound
from sandbox.registry import Registry, ResourceType

Endpoint = Literal[
    "version",
    "health",
    "api",
    "apis",
    "group",
    "resources",
    "openapi-root",
    "openapi",
    "openapi-v2",
    "metrics",
    "resource",
]

NOT_FOUND_MESSAGE = "the server could not find the requested resource"
_NAMESPACE_SUBRESOURCES = ("status", "finalize")


@dataclass(frozen=True)
class Route:
    endpoint: Endpoint
    group: str = ""
    version: str = ""
    path: str = ""  # for OpenAPI group-version documents: "api/v1", "apis/apps/v1"
    rt: ResourceType | None = None
    namespace: str = ""
    name: str = ""
    subresource: str = ""
    verb: str = ""


def route(method: str, path: str, *, registry: Registry, watch: bool) -> Route:
    parts = [p for p in path.split("/") if p]
    if not parts:
        raise NotFound(NOT_FOUND_MESSAGE)
    head = parts[0]
    if head == "version" and len(parts) == 1:
        return Route("version", verb="get")
    if head in ("healthz", "livez", "readyz"):
        return Route("health", verb="get")
    if head == "metrics" and len(parts) == 1:
        return Route("metrics", verb="get")
    if head == "openapi":
        return _openapi(parts)
    if head == "api":
        if len(parts) == 1:
            return Route("api", verb="get")
        return _resource_path(method, "", parts[1], parts[2:], registry=registry, watch=watch)
    if head == "apis":
        if len(parts) == 1:
            return Route("apis", verb="get")
        if len(parts) == 2:
            return Route("group", group=parts[1], verb="get")
        return _resource_path(method, parts[1], parts[2], parts[3:], registry=registry, watch=watch)
    raise NotFound(NOT_FOUND_MESSAGE)


def _openapi(parts: list[str]) -> Route:
    if parts[1:] == ["v2"]:
        return Route("openapi-v2", verb="get")
    if parts[1:2] == ["v3"]:
        if len(parts) == 2:
            return Route("openapi-root", verb="get")
        return Route("openapi", path="/".join(parts[2:]), verb="get")
    raise NotFound(NOT_FOUND_MESSAGE)


def _resource_path(
    method: str, group: str, version: str, rest: list[str], *, registry: Registry, watch: bool
) -> Route:
    if not rest:
        return Route("resources", group=group, version=version, verb="get")
    namespace = ""
    if rest[0] == "namespaces" and len(rest) >= 3 and rest[2] not in _NAMESPACE_SUBRESOURCES:
        namespace, rest = rest[1], rest[2:]
    if len(rest) > 3:
        raise NotFound(NOT_FOUND_MESSAGE)
    plural = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    rt = registry.resolve(group, version, plural)
    if rt is None or (subresource and subresource not in rt.subresources):
        raise NotFound(NOT_FOUND_MESSAGE)
    if namespace and not rt.namespaced:
        raise NotFound(NOT_FOUND_MESSAGE)
    verb = _verb(method, named=bool(name), watch=watch)
    allowed = _SUBRESOURCE_VERBS.get(subresource) if subresource else rt.verbs
    if allowed is not None and verb not in allowed:
        raise MethodNotAllowed(
            f"the server does not allow this method on the requested resource "
            f"({verb} {rt.plural}{'/' + subresource if subresource else ''})"
        )
    return Route(
        "resource",
        group=group,
        version=version,
        rt=rt,
        namespace=namespace,
        name=name,
        subresource=subresource,
        verb=verb,
    )


_SUBRESOURCE_VERBS: dict[str, tuple[str, ...]] = {
    "status": ("get", "patch", "update"),
    "scale": ("get", "patch", "update"),
    "log": ("get",),
    "eviction": ("create",),
    "binding": ("create",),
    "token": ("create",),
    "finalize": ("update",),
    "exec": ("get", "create"),  # a WebSocket GET, or kubectl's SPDY POST
    "attach": ("get", "create"),
    "portforward": ("get", "create"),
}


def _verb(method: str, *, named: bool, watch: bool) -> str:
    if method == "GET" or method == "HEAD":
        if watch:
            return "watch"
        return "get" if named else "list"
    if method == "POST":
        return "create"
    if method == "PUT":
        return "update"
    if method == "PATCH":
        return "patch"
    if method == "DELETE":
        return "delete" if named else "deletecollection"
    raise MethodNotAllowed(f"method {method} is not supported")
