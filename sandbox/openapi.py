"""OpenAPI v3 documents for kubectl: the root index and one document per group-version.

kubectl 1.37 reads them for three things (wire notes §2.1 and §4). `apply` checks that the kind's
PATCH operation carries `x-kubernetes-group-version-kind` and a `fieldValidation` query parameter;
without them it falls back to client-side validation, which needs OpenAPI v2, and fails. A second
client-side apply sends a strategic merge patch only when that PATCH lists the SMP content type
and `components.schemas` holds the kind (found by its GVK list). `kubectl explain` renders the
schemas. Built-in schemas are sandbox.schemas' definitions rewritten for OpenAPI 3.0; a CRD's
structural schema is wrapped with apiVersion, kind and metadata the way the API server does.

A document is a pure function of its group-version's resource types, so its hash is a digest
of those inputs: cheap to compute for the root, and a document is rebuilt only when its own
digest moves (kubectl caches documents by URL). Nothing here knows HTTP or storage.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from sandbox.registry import Registry, ResourceType
from sandbox.schemas import KUBERNETES_VERSION, REF_PREFIX, definition_name, definitions

COMPONENTS = "#/components/schemas/"
META = "io.k8s.apimachinery.pkg.apis.meta.v1."
INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
# Bump when the document layout changes, so kubectl's URL-keyed cache cannot serve an old shape.
LAYOUT_VERSION = 1

SMP = "application/strategic-merge-patch+json"
PATCH_TYPES = (
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
)
RESPONSE_TYPES = ("application/json", "application/yaml")


def _param(name: str, about: str, kind: str = "string", *, where: str = "query") -> dict[str, Any]:
    param = {"name": name, "in": where, "description": about, "schema": {"type": kind}}
    return {**param, "required": True} if where == "path" else param


_LIST_PARAMS = (
    _param("allowWatchBookmarks", "Ask for BOOKMARK events on a watch.", "boolean"),
    _param("continue", "Token from a previous page of a paged list."),
    _param("fieldSelector", "Restrict the result by field values."),
    _param("labelSelector", "Restrict the result by labels."),
    _param("limit", "Most items to return in one page.", "integer"),
    _param("resourceVersion", "Version the result must be at least as new as."),
    _param("resourceVersionMatch", "How resourceVersion applies: Exact or NotOlderThan."),
    _param("sendInitialEvents", "Start a watch with the current objects.", "boolean"),
    _param("timeoutSeconds", "End the call after this many seconds.", "integer"),
    _param("watch", "Stream changes instead of returning a list.", "boolean"),
)
_WRITE_PARAMS = (
    _param("dryRun", "All: validate and answer without persisting anything."),
    _param("fieldManager", "Name of the actor making the change, for field ownership."),
    _param(
        "fieldValidation",
        "Fields the schema does not know: Ignore drops them, Warn drops them with a warning, "
        "Strict rejects the request.",
    ),
)
_DELETE_PARAMS = (
    _param("dryRun", "All: validate and answer without deleting anything."),
    _param("gracePeriodSeconds", "Seconds before the object is deleted.", "integer"),
    _param("orphanDependents", "Deprecated: orphan the dependents.", "boolean"),
    _param("propagationPolicy", "Orphan, Background or Foreground garbage collection."),
)
_FORCE = _param("force", "Take over conflicting fields on apply.", "boolean")


@dataclass(frozen=True)
class _Verb:
    """How one Kubernetes verb appears as an operation. Schema roles: see `_PathBuilder.roles`."""

    method: str
    id_verb: str  # operationId prefix: read, replace, deleteCollection...
    action: str  # x-kubernetes-action
    params: tuple[dict[str, Any], ...]
    responses: tuple[tuple[str, str, str], ...]  # (code, description, schema role)
    body: str = ""  # schema role of the request body, if it takes one


_OK, _CREATED, _ACCEPTED = (
    ("200", "OK", "kind"),
    ("201", "Created", "kind"),
    ("202", "Accepted", "kind"),
)
_DELETED, _DELETING = ("200", "OK", "status"), ("202", "Accepted", "status")
_PURGE_PARAMS = _DELETE_PARAMS + _LIST_PARAMS
_VERBS = {
    "list": _Verb("get", "list", "list", _LIST_PARAMS, (("200", "OK", "list"),)),
    "create": _Verb("post", "create", "post", _WRITE_PARAMS, (_OK, _CREATED, _ACCEPTED), "kind"),
    "get": _Verb("get", "read", "get", (), (_OK,)),
    "update": _Verb("put", "replace", "put", _WRITE_PARAMS, (_OK, _CREATED), "kind"),
    "patch": _Verb("patch", "patch", "patch", (*_WRITE_PARAMS, _FORCE), (_OK, _CREATED), "patch"),
    "delete": _Verb("delete", "delete", "delete", _DELETE_PARAMS, (_DELETED, _DELETING), "delete"),
}
_VERBS["deletecollection"] = _Verb(
    "delete", "deleteCollection", "deletecollection", _PURGE_PARAMS, (_DELETED,), "delete"
)
_COLLECTION_VERBS = ("list", "create", "deletecollection")
_ITEM_VERBS = ("get", "update", "patch", "delete")

# subresource -> (verbs it serves, the GVK it reads and writes; None means the parent's kind)
_SUBRESOURCES: dict[str, tuple[tuple[str, ...], tuple[str, str, str] | None]] = {
    "status": (("get", "update", "patch"), None),
    "scale": (("get", "update", "patch"), ("autoscaling", "v1", "Scale")),
    "finalize": (("update",), None),
    "eviction": (("create",), ("policy", "v1", "Eviction")),
    "binding": (("create",), ("", "v1", "Binding")),
    "token": (("create",), ("authentication.k8s.io", "v1", "TokenRequest")),
}


@dataclass(frozen=True)
class _Target:
    """What an operation reads or writes: a GVK and its component schema, when one exists."""

    group: str
    version: str
    kind: str
    schema: str | None

    @property
    def gvk(self) -> dict[str, str]:
        return {"group": self.group, "kind": self.kind, "version": self.version}


def crd_schema_name(group: str, version: str, kind: str) -> str:
    """`com.example.v1.Widget` for example.com/v1 Widget: Kubernetes' name for CRD schemas."""
    return ".".join([*reversed(group.split(".")), version, kind])


def group_version_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _camel_group(group: str) -> str:
    words = group.removesuffix(".k8s.io").split(".") if group else ["core"]
    return "".join(word[:1].upper() + word[1:] for word in words)


def _content(schema: str | None, types: Iterable[str]) -> dict[str, Any]:
    body = {"schema": {"$ref": COMPONENTS + schema}} if schema else {}
    return {media: body for media in types}


class _PathBuilder:
    """The `paths` of one resource type: collection, item, all-namespaces and subresources."""

    def __init__(self, rt: ResourceType, *, schema: str | None, list_schema: str | None) -> None:
        self.rt = rt
        self.list_schema = list_schema
        self.parent = _Target(rt.group, rt.version, rt.kind, schema)
        self.targets: list[_Target] = [self.parent]
        camel_version = rt.version[:1].upper() + rt.version[1:]
        self.id_prefix = f"{_camel_group(rt.group)}{camel_version}"
        self.tag = f"{_camel_group(rt.group).lower()}_{rt.version}"

    def build(self) -> dict[str, Any]:
        rt = self.rt
        base = "/" + group_version_path(rt.group, rt.version)
        scoped = f"{base}/namespaces/{{namespace}}" if rt.namespaced else base
        collection, item = f"{scoped}/{rt.plural}", f"{scoped}/{rt.plural}/{{name}}"
        paths = {
            collection: self._path_item(self.parent, verbs=_COLLECTION_VERBS),
            item: self._path_item(self.parent, verbs=_ITEM_VERBS, named=True),
        }
        if rt.namespaced:
            paths[f"{base}/{rt.plural}"] = self._path_item(
                self.parent, verbs=("list",), suffix="ForAllNamespaces"
            )
        for sub in rt.subresources:
            if sub in _SUBRESOURCES:
                verbs, gvk = _SUBRESOURCES[sub]
                suffix = sub[:1].upper() + sub[1:]
                target = self._sub_target(gvk)
                paths[f"{item}/{sub}"] = self._path_item(
                    target, verbs=verbs, suffix=suffix, named=True, subresource=True
                )
        # A path whose verbs the type does not serve would hold nothing but its parameters.
        return {path: entry for path, entry in paths.items() if len(entry) > 1}

    def _sub_target(self, gvk: tuple[str, str, str] | None) -> _Target:
        if gvk is None:
            return self.parent
        target = _Target(*gvk, definition_name(*gvk))
        self.targets.append(target)
        return target

    def _path_item(
        self,
        target: _Target,
        *,
        verbs: tuple[str, ...],
        suffix: str = "",
        named: bool = False,
        subresource: bool = False,
    ) -> dict[str, Any]:
        served = verbs if subresource else tuple(v for v in verbs if v in self.rt.verbs)
        path_item: dict[str, Any] = {
            _VERBS[verb].method: self._operation(_VERBS[verb], target, suffix) for verb in served
        }
        params = [_param("name", f"name of the {target.kind}", where="path")] if named else []
        if self.rt.namespaced and suffix != "ForAllNamespaces":
            params.append(_param("namespace", "object name and auth scope", where="path"))
        path_item["parameters"] = [*params, _param("pretty", "Indent the JSON answer.")]
        return path_item

    def roles(self, target: _Target) -> dict[str, str | None]:
        return {
            "kind": target.schema,
            "list": self.list_schema,
            "status": META + "Status",
            "patch": META + "Patch",
            "delete": META + "DeleteOptions",
        }

    def _operation(self, verb: _Verb, target: _Target, suffix: str) -> dict[str, Any]:
        roles = self.roles(target)
        scope = "Namespaced" if self.rt.namespaced and suffix != "ForAllNamespaces" else ""
        responses: dict[str, Any] = {}
        for code, description, role in verb.responses:
            answer = {"description": description}
            responses[code] = {**answer, "content": _content(roles[role], RESPONSE_TYPES)}
        operation: dict[str, Any] = {
            "tags": [self.tag],
            "description": " ".join(filter(None, (verb.id_verb, self.rt.kind, suffix))),
            "operationId": f"{verb.id_verb}{self.id_prefix}{scope}{self.rt.kind}{suffix}",
            "parameters": list(verb.params),
            "responses": {**responses, "401": {"description": "Unauthorized"}},
            "x-kubernetes-action": verb.action,
            "x-kubernetes-group-version-kind": target.gvk,
        }
        if verb.body == "patch":
            # Custom resources take no strategic merge patch; its absence tells kubectl so.
            types = PATCH_TYPES if self.rt.custom else (*PATCH_TYPES, SMP)
            operation["requestBody"] = {
                "content": _content(roles["patch"], types),
                "required": True,
            }
        elif verb.body:
            content = _content(roles[verb.body], ("*/*",))
            operation["requestBody"] = {"content": content, "required": verb.body == "kind"}
        return operation


def _collapse_type(types: list[Any]) -> Any:
    real = [t for t in types if t != "null"]
    return real[0] if len(real) == 1 else real


def _to_openapi(node: Any) -> Any:
    """JSON-Schema 2020-12 definitions -> OpenAPI 3.0: move `$ref`s, drop `null` from types."""
    if isinstance(node, dict):
        converted: dict[str, Any] = {}
        for key, value in node.items():
            # Only string values: JSONSchemaProps has a *property* named `$ref` (a schema dict).
            if key == "$ref" and isinstance(value, str):
                converted[key] = COMPONENTS + value.removeprefix(REF_PREFIX)
            elif key == "type" and isinstance(value, list):
                converted[key] = _collapse_type(value)
            else:
                converted[key] = _to_openapi(value)
        return converted
    if isinstance(node, list):
        return [_to_openapi(item) for item in node]
    return node


def _references(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and value.startswith(REF_PREFIX):
                found.add(value[len(REF_PREFIX) :])
            else:
                _references(value, found)
    elif isinstance(node, list):
        for item in node:
            _references(item, found)


def _type_meta(kind: str) -> dict[str, Any]:
    version = {"description": "The group/version of this object's schema.", "type": "string"}
    return {"apiVersion": version, "kind": {"description": f"Always {kind}.", "type": "string"}}


def _crd_components(rt: ResourceType, name: str) -> dict[str, Any]:
    """A CRD's kind and list schemas, wrapped the way the API server publishes them."""
    gvk = {"group": rt.group, "kind": rt.kind, "version": rt.version}
    preserve: dict[str, Any] = {"x-kubernetes-preserve-unknown-fields": True}
    schema = copy.deepcopy(rt.schema) if rt.schema else preserve
    schema.setdefault("type", "object")
    schema["properties"] = {
        **schema.get("properties", {}),
        **_type_meta(rt.kind),
        "metadata": {
            "allOf": [{"$ref": COMPONENTS + META + "ObjectMeta"}],
            "description": "Standard object metadata.",
        },
    }
    schema["x-kubernetes-group-version-kind"] = [gvk]
    listing = {
        "description": f"A list of {rt.kind} objects.",
        "type": "object",
        "required": ["items"],
        "properties": {
            **_type_meta(rt.list_kind),
            "items": {"type": "array", "items": {"$ref": COMPONENTS + name}},
            "metadata": {"allOf": [{"$ref": COMPONENTS + META + "ListMeta"}]},
        },
        "x-kubernetes-group-version-kind": [{**gvk, "kind": rt.list_kind}],
    }
    return {name: schema, f"{name}List": listing}


def _digest(types: list[ResourceType]) -> str:
    inputs = [
        [rt.plural, rt.kind, rt.namespaced, rt.verbs, rt.subresources, rt.custom, rt.schema]
        for rt in sorted(types, key=lambda rt: rt.plural)
    ]
    payload = orjson.dumps(
        [LAYOUT_VERSION, KUBERNETES_VERSION, inputs], option=orjson.OPT_SORT_KEYS
    )
    return hashlib.sha512(payload).hexdigest().upper()


class OpenAPI:
    """Serves `/openapi/v3` (root) and `/openapi/v3/<group-version>` (document) bodies.

    Returned dicts are cached and shared: callers serialize them and must not mutate them.
    """

    def __init__(self, registry: Registry) -> None:
        self._registry = registry
        self._generation = -1
        self._digests: dict[str, str] = {}
        self._members: dict[str, list[ResourceType]] = {}
        self._documents: dict[str, tuple[str, dict[str, Any]]] = {}
        self._converted: dict[str, dict[str, Any]] = {}
        self._refs: dict[str, set[str]] = {}

    def root(self) -> dict[str, Any]:
        self._refresh()
        return {
            "paths": {
                path: {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest}"}
                for path, digest in self._digests.items()
            }
        }

    def document(self, group_version_path: str) -> dict[str, Any] | None:
        """The document of "api/v1" or "apis/<group>/<version>"; None if it is not served."""
        self._refresh()
        digest = self._digests.get(group_version_path)
        if digest is None:
            return None
        cached = self._documents.get(group_version_path)
        if cached is not None and cached[0] == digest:
            return cached[1]
        document = self._build(self._members[group_version_path])
        self._documents[group_version_path] = (digest, document)
        return document

    def _refresh(self) -> None:
        if self._generation == self._registry.generation:
            return
        self._members = {
            group_version_path(group, version): self._registry.in_group_version(group, version)
            for group, versions in self._registry.group_versions().items()
            for version in versions
        }
        self._digests = {path: _digest(types) for path, types in self._members.items()}
        self._documents = {k: v for k, v in self._documents.items() if k in self._digests}
        self._generation = self._registry.generation

    def _build(self, types: list[ResourceType]) -> dict[str, Any]:
        paths: dict[str, Any] = {}
        schemas: dict[str, Any] = {}
        builtin_roots = {META + "Status", META + "DeleteOptions", META + "Patch"}
        for rt in types:
            if rt.custom:
                name = crd_schema_name(rt.group, rt.version, rt.kind)
                schemas.update(_crd_components(rt, name))
                builder = _PathBuilder(rt, schema=name, list_schema=f"{name}List")
                builtin_roots.update({META + "ObjectMeta", META + "ListMeta"})
            else:
                kind_schema = definition_name(rt.group, rt.version, rt.kind)
                list_schema = definition_name(rt.group, rt.version, rt.list_kind)
                builder = _PathBuilder(rt, schema=kind_schema, list_schema=list_schema)
                builtin_roots.update(n for n in (kind_schema, list_schema) if n)
            paths.update(builder.build())
            builtin_roots.update(t.schema for t in builder.targets if t.schema)
        for name in sorted(self._closure(builtin_roots)):
            schemas[name] = self._definition(name)
        return {
            "openapi": "3.0.0",
            "info": {"title": "Kubernetes", "version": f"v{KUBERNETES_VERSION}"},
            "paths": paths,
            "components": {"schemas": schemas},
        }

    def _closure(self, roots: set[str]) -> set[str]:
        seen: set[str] = set()
        pending = [name for name in roots if name in definitions()]
        while pending:
            name = pending.pop()
            if name in seen:
                continue
            seen.add(name)
            if name not in self._refs:
                self._refs[name] = set()
                _references(definitions()[name], self._refs[name])
            pending.extend(self._refs[name] - seen)
        return seen

    def _definition(self, name: str) -> dict[str, Any]:
        """A built-in definition in OpenAPI form, converted once and shared by all documents."""
        if name not in self._converted:
            schema: dict[str, Any] = _to_openapi(definitions()[name])
            for key in ("apiVersion", "kind"):
                prop = schema.get("properties", {}).get(key)
                if isinstance(prop, dict):
                    prop.pop("enum", None)
            if name == INT_OR_STRING:
                schema.setdefault("format", "int-or-string")
            self._converted[name] = schema
        return self._converted[name]
