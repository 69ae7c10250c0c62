"""The write side of the kube server: apply, patch, scale, images and delete; the dry-run-first
change every write goes through (rollouts in `rollouts`, nodes in `node_writes`).

Every write goes through `Writes.change`, which first sends the same request with `dryRun=All`
and diffs the object before against what the API server says it would become (field paths with
old and new values, Secret values redacted), and only then, unless asked for a dry run, sends it
for real. The server-side dry run runs admission, defaulting and validation, so the diff is what
the cluster would do, not what we guess; a request the cluster refuses fails before any change.

Knows nothing of MCP (`tools_write` registers the tools) and nothing of the sandbox. The namespace
allow-list is applied here; when one is set, cluster-scoped objects (nodes, namespaces) are out
of reach, because a server confined to some namespaces must not change the whole cluster.
A manifest or patch that does not parse is refused without quoting it (`yamltext.problem`): it
may hold a Secret's values, which no tool output may carry.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, cast

import yaml

from core.connection import Api, Clusters, Json
from core.errors import Conflict, InvalidArgument, NotFound, PermissionDenied
from mcp_servers.common import arguments, bounds
from mcp_servers.common.yamltext import problem
from mcp_servers.kube import diffs
from mcp_servers.kube.resources import Catalog, Resource
from mcp_servers.kube.settings import KubeSettings

PatchType = Literal["strategic", "merge", "json"]
Propagation = Literal["Background", "Foreground", "Orphan"]

MANAGER = "kubecrew"
APPLY_PATCH = "application/apply-patch+yaml"  # server-side apply
MAX_DOCUMENTS = 20
CHANGE_LIMIT = 100
RETRIES = 3
CONTENT_TYPES: dict[PatchType, str] = {
    "strategic": "application/strategic-merge-patch+json",
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
}
# The scale subresource's kinds: workloads, and Cluster API's node pools (their machines).
_SCALABLE = {
    "Deployment", "StatefulSet", "ReplicaSet", "ReplicationController", "MachineDeployment",
    "MachineSet",
}  # fmt: skip
_IMAGE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._\-/:@]*$")


@dataclass(frozen=True)
class Target:
    """One object a write is aimed at, resolved and checked against the allow-list."""

    resource: Resource
    name: str
    namespace: str | None

    @property
    def path(self) -> str:
        return self.resource.path(self.namespace, self.name)

    @property
    def what(self) -> str:
        where = f" in namespace {self.namespace}" if self.namespace else ""
        return f"{self.resource.kind.lower()} {self.name}{where}"

    def ref(self) -> Json:
        ref: Json = {"kind": self.resource.kind, "name": self.name}
        if self.namespace:
            ref["namespace"] = self.namespace
        return ref


class Writes:
    def __init__(self, clusters: Clusters, settings: KubeSettings, catalog: Catalog | None = None):
        self.clusters = clusters
        self.settings = settings
        self.catalog = catalog or Catalog()

    # -- resolving and the dry-run-first write -----------------------------------------------

    def api(self, context: str | None) -> Api:
        return self.clusters.api(self.settings.check_context(context))

    def target(self, api: Api, kind: str, name: str, namespace: str | None) -> Target:
        return self._scoped(self.catalog.resolve(api, kind), name, namespace)

    def _scoped(self, resource: Resource, name: str, namespace: str | None) -> Target:
        arguments.name(name)
        if not resource.namespaced:
            if self.settings.namespaces is not None:
                raise PermissionDenied(
                    f"this server may only change objects in the namespaces "
                    f"{', '.join(self.settings.namespaces)}; {resource.kind} {name} is "
                    "cluster-scoped, so ask an operator with a cluster-wide server"
                )
            return Target(resource, name, None)
        scope = self.settings.check_namespace(arguments.namespace(namespace or "default"))
        return Target(resource, name, scope)

    def current(self, api: Api, target: Target) -> Json | None:
        try:
            return api.get(target.path, what=target.what)
        except NotFound:
            return None

    def change(
        self,
        api: Api,
        target: Target,
        method: str,
        *,
        body: Any,
        content_type: str = "application/json",
        query: dict[str, Any] | None = None,
        dry_run: bool,
        before: Json | None = None,
        note: str = "",
    ) -> Json:
        """Dry-run `method target` with `body`, diff, and (unless `dry_run`) do it for real."""
        before = self.current(api, target) if before is None else before
        query = dict(query or {})
        preview = self.preview(api, target, method, body=body, content_type=content_type,
                               query=query)  # fmt: skip
        if not dry_run:
            preview = api.request(
                method, target.path, query=query, body=body, content_type=content_type,
                what=target.what,
            )  # fmt: skip
        return result(target, before, preview, dry_run=dry_run, note=note)

    def preview(
        self,
        api: Api,
        target: Target,
        method: str,
        *,
        body: Any,
        content_type: str = "application/json",
        query: dict[str, Any] | None = None,
    ) -> Json:
        """The object as `method target` would leave it, from a server-side dry run: admission,
        defaulting and validation applied, nothing changed."""
        return api.request(
            method, target.path, query={**(query or {}), "dryRun": "All"}, body=body,
            content_type=content_type, what=target.what,
        )  # fmt: skip

    # -- the writes --------------------------------------------------------------------------

    def apply(
        self,
        manifest: str,
        *,
        namespace: str | None = None,
        force: bool = False,
        dry_run: bool = False,
        context: str | None = None,
    ) -> Json:
        api = self.api(context)
        documents = _documents(manifest)
        planned = [self._apply_target(api, doc, namespace) for doc in documents]
        query = {"fieldManager": MANAGER, "force": force}

        def send(batch: list[tuple[Target, Json]], dry: bool) -> list[Json]:
            return [
                self.change(api, t, "PATCH", body=d, content_type=APPLY_PATCH,
                            query=query, dry_run=dry)
                for t, d in batch
            ]  # fmt: skip

        # The server cannot dry-run an object in a namespace that does not exist yet, so the
        # objects of a namespace this manifest creates are checked once it exists.
        creating = {
            t.name for t, _ in planned
            if t.resource.kind == "Namespace" and self.current(api, t) is None
        }  # fmt: skip
        later = [t.namespace in creating for t, _ in planned]
        now_batch = [p for p, wait in zip(planned, later, strict=True) if not wait]
        later_batch = [p for p, wait in zip(planned, later, strict=True) if wait]
        # All dry runs first: a manifest the cluster refuses in part changes nothing at all.
        first = send(now_batch, True)
        if dry_run:
            second = [
                result(t, None, d, dry_run=True, note=f"namespace {t.namespace} is created by "
                       "this manifest; the server checks this object once it exists")
                for t, d in later_batch
            ]  # fmt: skip
        else:
            first = send(now_batch, False)
            send(later_batch, True)
            second = send(later_batch, False)
        # Answer in the manifest's order.
        firsts, seconds = iter(first), iter(second)
        objects = [next(seconds) if wait else next(firsts) for wait in later]
        return {"dry_run": dry_run, "objects": objects}

    def _apply_target(self, api: Api, doc: Json, namespace: str | None) -> tuple[Target, Json]:
        api_version, kind = str(doc.get("apiVersion", "")), str(doc.get("kind", ""))
        metadata = doc.get("metadata")
        if not api_version or not kind or not isinstance(metadata, dict):
            raise InvalidArgument("every manifest needs apiVersion, kind and metadata.name")
        resource = self.catalog.resources(api).by_kind(api_version, kind)
        if resource is None:
            raise NotFound(f"the cluster has no {kind} in {api_version}; check the apiVersion")
        declared = metadata.get("namespace")
        if declared and namespace and declared != namespace:
            raise InvalidArgument(
                f"the manifest of {kind} {metadata.get('name')} says namespace {declared!r} but "
                f"the namespace argument is {namespace!r}; drop one of them"
            )
        target = self._scoped(resource, str(metadata.get("name", "")), declared or namespace)
        if target.namespace:
            doc = {**doc, "metadata": {**metadata, "namespace": target.namespace}}
        return target, doc

    def patch(
        self,
        kind: str,
        name: str,
        patch: Json | list[Any] | str,
        *,
        patch_type: PatchType = "strategic",
        namespace: str | None = None,
        dry_run: bool = False,
        context: str | None = None,
    ) -> Json:
        body = parse_patch(patch, patch_type)
        api = self.api(context)
        target = self.target(api, kind, name, namespace)
        return self.change(
            api, target, "PATCH", body=body, content_type=CONTENT_TYPES[patch_type],
            query={"fieldManager": MANAGER}, dry_run=dry_run,
        )  # fmt: skip

    def merge(self, target: Target, api: Api, body: Json, *, dry_run: bool, note: str = "") -> Json:
        return self.change(
            api, target, "PATCH", body=body, content_type=CONTENT_TYPES["merge"],
            query={"fieldManager": MANAGER}, dry_run=dry_run, note=note,
        )  # fmt: skip

    def scale(
        self,
        kind: str,
        name: str,
        replicas: int,
        *,
        namespace: str | None = None,
        dry_run: bool = False,
        context: str | None = None,
    ) -> Json:
        if replicas < 0:
            raise InvalidArgument(f"replicas must be 0 or more, not {replicas}")
        api = self.api(context)
        target = only(self.target(api, kind, name, namespace), _SCALABLE, "scale")
        return self.merge(target, api, {"spec": {"replicas": replicas}}, dry_run=dry_run)

    def set_image(
        self,
        kind: str,
        name: str,
        container: str,
        image: str,
        *,
        namespace: str | None = None,
        dry_run: bool = False,
        context: str | None = None,
    ) -> Json:
        arguments.name(container, argument="container")
        if len(image) > 512 or not _IMAGE.match(image):
            raise InvalidArgument(f"image {image!r} is not a container image reference")
        api = self.api(context)
        target = self.target(api, kind, name, namespace)
        before = self.current(api, target)
        if before is None:
            raise NotFound(f"{target.what} was not found")
        path = _pod_spec_path(target.resource.kind)
        spec: Json = _dig(before, path)
        field = next(
            (f for f in ("containers", "initContainers")
             if any(c.get("name") == container for c in spec.get(f) or [])),
            None,
        )  # fmt: skip
        if field is None:
            names = [
                c.get("name") for f in ("containers", "initContainers") for c in spec.get(f) or []
            ]
            raise NotFound(f"{target.what} has no container {container!r}; it has {names}")
        body: Json = {field: [{"name": container, "image": image}]}
        for key in reversed(path):
            body = {key: body}
        return self.change(
            api, target, "PATCH", body=body, content_type=CONTENT_TYPES["strategic"],
            query={"fieldManager": MANAGER}, dry_run=dry_run, before=before,
        )  # fmt: skip

    def delete(
        self,
        kind: str,
        name: str,
        *,
        namespace: str | None = None,
        confirm: str = "",
        propagation: Propagation = "Background",
        dry_run: bool = False,
        context: str | None = None,
    ) -> Json:
        api = self.api(context)
        target = self.target(api, kind, name, namespace)
        exact = f"{target.resource.kind.lower()}/{name}"
        if (target.resource.kind == "Namespace" or not target.resource.namespaced) and (
            confirm != exact
        ):
            raise PermissionDenied(
                f"deleting {target.what} removes a cluster-scoped object"
                + (" and everything in it" if target.resource.kind == "Namespace" else "")
                + f"; if that is really wanted, call again with confirm={exact!r}"
            )
        before = self.current(api, target)
        if before is None:
            raise NotFound(f"{target.what} was not found; nothing to delete")
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": propagation}
        out = self.change(
            api, target, "DELETE", body=body, dry_run=dry_run, before=before,
            note="deleted" if not dry_run else "would be deleted",
        )  # fmt: skip
        out["changes"] = [{"path": ".", "old": "exists", "new": "deleted"}]
        return out


def retrying(attempt: Callable[[], Json]) -> Json:
    """`attempt()`, again while it meets a Conflict, three tries in all. For writes guarded by
    the resourceVersion they read: controllers change objects all the time (status, their own
    taints), so each try reads afresh and recomputes instead of overwriting blindly."""
    for _ in range(RETRIES - 1):
        try:
            return attempt()
        except Conflict:
            continue
    return attempt()


def result(target: Target, before: Json | None, after: Json, *, dry_run: bool, note: str) -> Json:
    """What a write tells its caller: which object, what changed (bounded), whether it is done."""
    kind = target.resource.kind
    if after.get("kind") == "Status":  # a delete answers with a Status once the object is gone
        after = {}
    changes = diffs.changes(before, after, kind=kind)
    chosen = bounds.page(changes, limit=CHANGE_LIMIT, what="changes")
    out: Json = {
        "object": target.ref(),
        "dry_run": dry_run,
        "applied": not dry_run,
        "created": before is None,
        "changes": chosen.items,
    }
    if not changes:
        out["note"] = note or "nothing to change: the object already is as asked"
    elif chosen.note or note:
        out["note"] = "; ".join(n for n in (note, chosen.note) if n)
    return out


def only(target: Target, kinds: set[str], verb: str) -> Target:
    if target.resource.kind not in kinds:
        raise InvalidArgument(f"cannot {verb} a {target.resource.kind}; use one of {sorted(kinds)}")
    return target


def _pod_spec_path(kind: str) -> tuple[str, ...]:
    if kind == "Pod":
        return ("spec",)
    if kind == "CronJob":
        return ("spec", "jobTemplate", "spec", "template", "spec")
    return ("spec", "template", "spec")


def _dig(obj: Json, path: tuple[str, ...]) -> Json:
    for key in path:
        obj = obj.get(key) or {}
    return obj


def _documents(manifest: str) -> list[Json]:
    try:
        found = [d for d in yaml.safe_load_all(manifest) if d is not None]
    except yaml.YAMLError as exc:
        raise InvalidArgument(f"the manifest is not valid YAML or JSON: {problem(exc)}") from exc
    items: list[Any] = []
    for doc in found:
        items += doc.get("items", []) if isinstance(doc, dict) and "items" in doc else [doc]
    if not items or not all(isinstance(d, dict) for d in items):
        raise InvalidArgument("the manifest must hold one or more objects (YAML or JSON)")
    if len(items) > MAX_DOCUMENTS:
        raise InvalidArgument(f"at most {MAX_DOCUMENTS} objects per apply; split the manifest")
    return items


def parse_patch(patch: Json | list[Any] | str, patch_type: PatchType) -> Json | list[Any]:
    parsed: Any = patch
    if isinstance(patch, str):
        try:
            parsed = yaml.safe_load(patch)
        except yaml.YAMLError as exc:
            raise InvalidArgument(f"the patch is not valid JSON or YAML: {problem(exc)}") from exc
    if patch_type == "json" and not isinstance(parsed, list):
        raise InvalidArgument('a json patch is a list of operations: [{"op": "replace", ...}]')
    if patch_type != "json" and not isinstance(parsed, dict):
        raise InvalidArgument(f"a {patch_type} patch is an object, such as {{'spec': {{...}}}}")
    return cast("Json | list[Any]", parsed)
