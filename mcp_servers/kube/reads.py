"""The read side of the kube server: list, get, describe, events and logs, as plain typed Python.

`Reads` is the engine the FastMCP tools call; it knows the cluster only through `Clusters` (a
kubeconfig) and the `Catalog` of discovered resources, and knows nothing of MCP. Every answer is
a JSON-able dict, bounded by `common.bounds` with a note that says how to get more, and built from
objects that went through `redaction` first, so no output shape can carry a Secret's values.
The namespace allow-list of `KubeSettings` is applied here, once: a namespace outside it is
refused, and a list "everywhere" asks each allowed namespace in turn (which also works for an
identity whose RBAC reaches only those namespaces).

The cluster-wide views (top, rollout, can_i, overview) live in `status.py`, built on this class.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any, Literal

from core.connection import Api, Clusters, Json
from core.errors import InvalidArgument, NotFound, PermissionDenied
from mcp_servers.common import arguments, bounds, yamltext
from mcp_servers.kube import rows
from mcp_servers.kube.clock import ClusterClock
from mcp_servers.kube.redaction import LAST_APPLIED, redact
from mcp_servers.kube.resources import Catalog, Resource
from mcp_servers.kube.rows import Row
from mcp_servers.kube.settings import KubeSettings

Output = Literal["summary", "yaml", "fields"]
EVENT_LIMIT = 10  # recent events shown by describe
OWNER_DEPTH = 5
MAX_TAIL = 5_000
PAGE = 500  # objects a request, where a read walks a whole kind


class Reads:
    def __init__(self, clusters: Clusters, settings: KubeSettings, catalog: Catalog | None = None):
        self.clusters = clusters
        self.settings = settings
        self.catalog = catalog or Catalog()
        self.clock = ClusterClock()

    # -- plumbing shared by every read ---------------------------------------------------------

    def api(self, context: str | None) -> Api:
        """The API for a read where a moment-old answer is right (an inventory question, an
        overview, a description): it may come from the server's watch-backed caches."""
        return self.clusters.api(self.settings.check_context(context), stale_ok=True)

    def fresh(self, context: str | None) -> Api:
        """The API for a read that must see the current state (whether a rollout is done)."""
        return self.clusters.api(self.settings.check_context(context))

    def row(self, api: Api, obj: Json, *, kind: str) -> Row:
        """`obj`'s summary row, aged on the cluster's clock."""
        return rows.summary(obj, kind=kind, now=self.clock.now(api))

    def namespace(self, value: str | None) -> str:
        return self.settings.check_namespace(arguments.namespace(value or "default"))

    def objects(
        self,
        api: Api,
        resource: Resource,
        namespace: str | None,
        *,
        label_selector: str = "",
        field_selector: str = "",
    ) -> list[Json]:
        """Objects of `resource` in `namespace` (None: everywhere allowed), redacted, sorted."""
        query = {"labelSelector": label_selector, "fieldSelector": field_selector}
        found: list[Json] = []
        for scope in self.scopes(resource, namespace):
            answer = api.get(resource.path(scope), what=_what(resource, scope), **query)
            found += redact(answer, kind=resource.kind).get("items", [])
        found = [o for o in found if self._visible(o)]
        found.sort(key=_place)
        return found

    def each(self, api: Api, resource: Resource, namespace: str | None) -> Iterator[Json]:
        """Objects of `resource` in `namespace` (None: everywhere allowed), redacted, read `PAGE`
        at a time as kubectl lists: the memory of one page, whatever the cluster's size."""
        for scope in self.scopes(resource, namespace):
            token = ""
            while True:
                answer = api.get(resource.path(scope), what=_what(resource, scope), limit=PAGE,
                                 **{"continue": token})  # fmt: skip
                yield from filter(self._visible, redact(answer, kind=resource.kind)["items"])
                token = (answer.get("metadata") or {}).get("continue") or ""
                if not token:
                    break

    def first(
        self,
        api: Api,
        resource: Resource,
        namespace: str | None,
        *,
        count: int,
        label_selector: str = "",
        field_selector: str = "",
    ) -> tuple[list[Json], int] | None:
        """The first `count` objects and how many there are in all, from lists the API server
        limits (it sorts by namespace and name, as `objects` does), so a page of a 5,000-pod
        list does not download them all; with an allow-list of several namespaces, one limited
        list each, merged. None when the server does not say how many remain."""
        query = {"labelSelector": label_selector, "fieldSelector": field_selector}
        items: list[Json] = []
        total = 0
        for scope in self.scopes(resource, namespace):
            path = resource.path(scope)
            answer = api.get(path, what=_what(resource, scope), limit=count, **query)
            meta = answer.get("metadata") or {}
            remaining = meta.get("remainingItemCount")
            if meta.get("continue") and remaining is None:
                return None
            found = redact(answer, kind=resource.kind).get("items", [])
            items += found
            total += len(found) + int(remaining or 0)
        items.sort(key=_place)
        return items[:count], total

    def scopes(self, resource: Resource, namespace: str | None) -> list[str | None]:
        """The namespaces a read of `resource` in `namespace` asks about (None: everywhere)."""
        if not resource.namespaced:
            return [None]
        if namespace is not None:
            return [self.namespace(namespace)]
        if self.settings.namespaces is not None:
            return list(self.settings.namespaces)
        return [None]

    def object(self, api: Api, resource: Resource, name: str, namespace: str | None) -> Json:
        arguments.name(name)
        scope = self.namespace(namespace) if resource.namespaced else None
        what = f"{resource.kind.lower()} {name}" + (f" in namespace {scope}" if scope else "")
        return redact(api.get(resource.path(scope, name), what=what), kind=resource.kind)

    def _visible(self, obj: Json) -> bool:
        namespace = obj.get("metadata", {}).get("namespace")
        return namespace is None or self.settings.allows(namespace)

    # -- list and get --------------------------------------------------------------------------

    def list_objects(
        self,
        kind: str,
        *,
        namespace: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
        output: Output = "summary",
        fields: list[str] | None = None,
        limit: int = bounds.DEFAULT_LIMIT,
        offset: int = 0,
        context: str | None = None,
    ) -> Json:
        arguments.selector(label_selector, argument="label_selector")
        arguments.selector(field_selector, argument="field_selector")
        paths = rows.check_paths(fields or []) if output == "fields" else []
        api = self.fresh(context) if _owners_asked(paths) else self.api(context)
        resource = self.catalog.resolve(api, kind)
        selectors = {"label_selector": label_selector, "field_selector": field_selector}
        count = max(1, min(limit, bounds.MAX_LIMIT)) + max(0, offset)
        quick = self.first(api, resource, namespace, count=count, **selectors)
        if quick is not None:
            items, total = quick
            chosen = bounds.page(
                items, limit=limit, offset=offset, what=resource.label, total=total
            )
        else:
            found = self.objects(api, resource, namespace, **selectors)
            chosen = bounds.page(found, limit=limit, offset=offset, what=resource.label)
        answer: Json = {"kind": resource.kind, "total": chosen.total, "offset": chosen.offset}
        if output == "yaml":
            answer["yaml"] = yamltext.dump([_shown(o, resource) for o in chosen.items])
        elif output == "fields":
            answer["items"] = [rows.fields(o, paths) for o in chosen.items]
        else:
            answer["items"] = [self.row(api, o, kind=resource.kind) for o in chosen.items]
        if chosen.note:
            answer["note"] = chosen.note
        return answer

    def get(
        self,
        kind: str,
        name: str,
        *,
        namespace: str | None = None,
        output: Output = "yaml",
        fields: list[str] | None = None,
        context: str | None = None,
    ) -> Json:
        paths = rows.check_paths(fields or []) if output == "fields" else []
        api = self.fresh(context) if _owners_asked(paths) else self.api(context)
        resource = self.catalog.resolve(api, kind)
        obj = self.object(api, resource, name, namespace)
        if output == "fields":
            return rows.fields(obj, paths)
        if output == "summary":
            return self.row(api, obj, kind=resource.kind)
        text, note = bounds.tail_text(yamltext.dump(_shown(obj, resource)))
        return {"yaml": text, **({"note": note} if note else {})}

    # -- describe --------------------------------------------------------------------------------

    def describe(
        self, kind: str, name: str, *, namespace: str | None = None, context: str | None = None
    ) -> Json:
        api = self.api(context)
        resource = self.catalog.resolve(api, kind)
        obj = self.object(api, resource, name, namespace)
        metadata = obj.get("metadata", {})
        answer: Json = {
            "kind": resource.kind,
            "summary": self.row(api, obj, kind=resource.kind),
            "labels": metadata.get("labels") or {},
            "conditions": [
                {
                    k: c.get(k)
                    for k in ("type", "status", "reason", "message", "lastTransitionTime")
                    if c.get(k) is not None
                }
                for c in (obj.get("status") or {}).get("conditions") or []
            ],
            "owners": self._owner_chain(api, obj),
        }
        if resource.kind == "Pod":
            answer["containers"] = _containers(obj)
        if resource.kind == "Secret":
            answer["keys"] = rows.secret_keys(obj)
        if resource.kind == "Deployment":
            template = obj.get("spec", {}).get("template", {}).get("spec", {})
            answer["images"] = [c.get("image") for c in template.get("containers") or []]
        recent = self._events_about(api, obj, resource)
        answer["events"] = [self.row(api, e, kind="Event") for e in recent[:EVENT_LIMIT]]
        if len(recent) > EVENT_LIMIT:
            answer["note"] = (
                f"{len(recent) - EVENT_LIMIT} older events left out; use the events tool with "
                f"kind={resource.kind} name={metadata.get('name')} to page through them"
            )
        return answer

    def _owner_chain(self, api: Api, obj: Json) -> list[Json]:
        chain: list[Json] = []
        current = obj
        for _ in range(OWNER_DEPTH):
            refs = current.get("metadata", {}).get("ownerReferences") or []
            ref = next((r for r in refs if r.get("controller")), refs[0] if refs else None)
            if ref is None:
                break
            resource = self.catalog.resources(api).by_kind(ref["apiVersion"], ref["kind"])
            link: Json = {"kind": ref["kind"], "name": ref["name"]}
            chain.append(link)
            if resource is None:
                break
            namespace = current.get("metadata", {}).get("namespace")
            try:
                current = self.object(api, resource, ref["name"], namespace)
            except (NotFound, PermissionDenied):  # a gone or hidden owner ends the chain
                link["missing"] = True
                break
            link.update(self.row(api, current, kind=resource.kind))
        return chain

    def _events_about(self, api: Api, obj: Json, resource: Resource) -> list[Json]:
        metadata = obj.get("metadata", {})
        scope = metadata.get("namespace") or "default"
        listed = api.get(f"/api/v1/namespaces/{scope}/events", what=f"events in {scope}")
        uid = metadata.get("uid")
        about = [
            e
            for e in listed.get("items", [])
            if (e.get("involvedObject") or {}).get("uid") == uid
            or (
                (e.get("involvedObject") or {}).get("kind") == resource.kind
                and (e.get("involvedObject") or {}).get("name") == metadata.get("name")
            )
        ]
        return sorted(about, key=rows.event_time, reverse=True)

    # -- events ----------------------------------------------------------------------------------

    def events(
        self,
        *,
        namespace: str | None = None,
        kind: str = "",
        name: str = "",
        type: str = "",
        reason: str = "",
        since_seconds: int | None = None,
        limit: int = bounds.DEFAULT_LIMIT,
        offset: int = 0,
        context: str | None = None,
    ) -> Json:
        if type and type not in ("Normal", "Warning"):
            raise InvalidArgument(f"type {type!r}: use 'Normal' or 'Warning'")
        if reason:
            arguments.kind(reason, argument="reason")
        if name:
            arguments.name(name)
        api = self.api(context)
        wanted_kind = self.catalog.resolve(api, kind).kind if kind else ""
        events = self.catalog.resolve(api, "events")
        found = self.objects(api, events, namespace)
        cutoff = (
            self.clock.now(api).timestamp() - since_seconds if since_seconds is not None else None
        )

        def keep(event: Json) -> bool:
            involved = event.get("involvedObject") or {}
            return (
                (not wanted_kind or involved.get("kind") == wanted_kind)
                and (not name or involved.get("name") == name)
                and (not type or event.get("type") == type)
                and (not reason or event.get("reason") == reason)
                and (cutoff is None or _epoch(rows.event_time(event)) >= cutoff)
            )

        chosen = sorted(filter(keep, found), key=rows.event_time, reverse=True)
        shown = bounds.page(chosen, limit=limit, offset=offset, what="events")
        answer: Json = {
            "total": shown.total,
            "offset": shown.offset,
            "items": [self.row(api, e, kind="Event") for e in shown.items],
        }
        if shown.note:
            answer["note"] = shown.note
        return answer

    # -- logs ------------------------------------------------------------------------------------

    def logs(
        self,
        pod: str,
        *,
        namespace: str | None = None,
        container: str = "",
        previous: bool = False,
        tail: int = 200,
        since_seconds: int | None = None,
        grep: str = "",
        context: str | None = None,
    ) -> Json:
        api = self.api(context)
        scope = self.namespace(namespace)
        obj = self.object(api, self.catalog.resolve(api, "pods"), pod, scope)
        names = [c["name"] for c in obj.get("spec", {}).get("containers") or []]
        annotations = obj["metadata"].get("annotations") or {}
        default = annotations.get("kubectl.kubernetes.io/default-container")
        chosen = container or default or (names[0] if len(names) == 1 else "")
        if chosen not in names:
            raise InvalidArgument(
                f"pod {pod} has containers {', '.join(names)}: pass one of them as container"
            )
        if len(grep) > 200 or "\n" in grep:
            raise InvalidArgument("grep is a plain substring of at most 200 characters")
        query: dict[str, Any] = {
            "container": chosen,
            "tailLines": max(1, min(tail, MAX_TAIL)),
            "previous": "true" if previous else None,
            "sinceSeconds": since_seconds,
        }
        text = api.text(
            f"/api/v1/namespaces/{scope}/pods/{pod}/log", what=f"logs of {pod}", **query
        )
        lines = text.splitlines()
        if grep:
            lines = [line for line in lines if grep.lower() in line.lower()]
        shown, note = bounds.tail_text("\n".join(lines))
        answer: Json = {"pod": pod, "container": chosen, "lines": len(lines), "log": shown}
        if note:
            answer["note"] = note
        return answer


def _owners_asked(paths: list[str]) -> bool:
    """Whether `fields` asks who wrote what (managedFields), which the caches do not keep."""
    return any(path.startswith("metadata.managedFields") for path in paths)


def _what(resource: Resource, namespace: str | None) -> str:
    return f"{resource.label} in namespace {namespace}" if namespace else resource.label


def _shown(obj: Json, resource: Resource) -> Json:
    """The object as `kubectl get -o yaml` shows it: with kind, without managedFields."""
    metadata = {k: v for k, v in obj.get("metadata", {}).items() if k != "managedFields"}
    annotations = metadata.get("annotations") or {}
    if LAST_APPLIED in annotations and len(str(annotations[LAST_APPLIED])) > 2_000:
        metadata["annotations"] = {**annotations, LAST_APPLIED: "<left out: long>"}
    return {"apiVersion": resource.api_version, "kind": resource.kind, **obj, "metadata": metadata}


def _containers(pod: Json) -> list[Json]:
    statuses = {c["name"]: c for c in pod.get("status", {}).get("containerStatuses") or []}
    shown = []
    for c in pod.get("spec", {}).get("containers") or []:
        status = statuses.get(c["name"], {})
        entry: Json = {
            "name": c["name"],
            "image": c.get("image"),
            "ready": status.get("ready", False),
            "restarts": status.get("restartCount", 0),
            "state": status.get("state", {}),
        }
        if status.get("lastState"):
            entry["last_state"] = status["lastState"]
        for key in ("resources", "ports"):
            if c.get(key):
                entry[key] = c[key]
        shown.append(entry)
    return shown


def _epoch(stamp: str) -> float:
    if not stamp:
        return 0.0
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def _place(obj: Json) -> tuple[str, str]:
    """Namespace, then name: the order the API server lists in."""
    return obj["metadata"].get("namespace", ""), obj["metadata"]["name"]
