"""Watch-backed caches of the kinds the crew reads most, shared by every tool of one server.

`Informers` keeps one `Reflector` (list, then watch) per context, kind and scope, started by the
first read that may use it and stopped after `idle_s` without one, so a server that is only
asked for its tools opens no connection. A read is answered from a cache only where the caller
said a moment-old answer is right (`Clusters.api(stale_ok=True)`: diagnosis, the overview, lists
and gets of inventory questions), the reflector has a whole list in step, and the request is one
the store answers exactly: a list with label and field selectors it reads, `limit` and its own
continue tokens, or a get of one object. Anything else (another kind, a subresource, a
`resourceVersion`, a selector it does not read, an object it does not hold) goes to the API
server, as does every read of a caller that did not say stale_ok: a write's own reads (its
preconditions and dry run) always see the API server's current state.

A write made through this server is kept at once (`CachedApi.request`), so the server's next
read shows it; see `store` for writes whose answer is not the object. And no cached answer is
older than what the server read afresh: once it saw an object of a kept kind at resourceVersion
N (a rollout read done, say), a cache answers only after its watch passed N, waiting up to
`CATCH_UP_S` for that; the API server answers otherwise.

Scope: with a namespace allow-list, a reflector per allowed namespace asked about; without one,
one per kind across the cluster, or per namespace when this identity may not list the kind
cluster-wide. At most `MAX_REFLECTORS` run at once, and their stores together stay within
`max_bytes` of JSON: past it, the kind that outgrew it is read from the API server again.

Kinds are kept without Secrets on purpose: a Secret's values are never held by this server.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.connection import REQUEST_TIMEOUT_S, Api, Json, WouldWait, may_wait
from core.errors import PermissionDenied
from mcp_servers.common.cache import summaries
from mcp_servers.common.cache.reflector import Reflector
from mcp_servers.common.cache.store import (
    Entry,
    Key,
    Kind,
    Store,
    after_token,
    field_match,
    label_match,
)
from mcp_servers.common.watched import WatchedApi, WatchedClusters

POD_FIELDS = ("spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
              "spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP",
              "status.nominatedNodeName")  # fmt: skip
EVENT_FIELDS = ("involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.fieldPath",
                "involvedObject.resourceVersion", "reason", "reportingComponent", "type",
                "source")  # fmt: skip
KINDS = (
    Kind("/api/v1", "pods", "Pod", fields=POD_FIELDS, summary=summaries.pod),
    Kind("/api/v1", "nodes", "Node", namespaced=False, fields=("spec.unschedulable",)),
    Kind("/api/v1", "events", "Event", fields=EVENT_FIELDS),
    Kind("/api/v1", "services", "Service", fields=("spec.clusterIP", "spec.type")),
    Kind("/api/v1", "endpoints", "Endpoints"),
    Kind("/apis/discovery.k8s.io/v1", "endpointslices", "EndpointSlice"),
    Kind("/apis/apps/v1", "deployments", "Deployment"),
    Kind("/apis/apps/v1", "replicasets", "ReplicaSet", fields=("status.replicas",)),
    Kind("/apis/apps/v1", "statefulsets", "StatefulSet"),
    Kind("/apis/apps/v1", "daemonsets", "DaemonSet"),
    Kind("/apis/batch/v1", "jobs", "Job", fields=("status.successful",)),
    Kind("/apis/batch/v1", "cronjobs", "CronJob"),
    Kind("/apis/coordination.k8s.io/v1", "leases", "Lease"),  # the nodes' are the cluster's clock
)
MAX_REFLECTORS = 48
MAX_BYTES = 768 * 2**20  # JSON kept by all stores of a server
IDLE_S = 900.0
CATCH_UP_S = 0.1  # how long a read waits for a cache to pass what the server saw afresh
REFUSED_S = 300.0  # a kind refused (RBAC, not served) is read from the API server this long
ANSWERED = frozenset({"labelSelector", "fieldSelector", "limit", "continue"})


@dataclass(frozen=True)
class Target:
    """What a request path names: a kind's collection in a namespace (or everywhere), or one
    of its objects; `rest` is a subresource's name."""

    kind: Kind
    namespace: str | None
    name: str = ""
    rest: str = ""

    @property
    def key(self) -> Key:
        return self.namespace or "", self.name


class Informers:
    def __init__(
        self,
        api: Callable[[str | None], Api],
        *,
        namespaces: tuple[str, ...] | None = None,
        kinds: tuple[Kind, ...] = KINDS,
        max_bytes: int = MAX_BYTES,
        idle_s: float = IDLE_S,
    ) -> None:
        self.api = api  # a context's API, uncached
        self.namespaces = namespaces  # the allow-list, when the server has one
        self.max_bytes = max_bytes
        self.idle_s = idle_s
        self._kinds = {(k.prefix, k.plural): k for k in kinds}
        self._reflectors: dict[tuple[str, str, str | None], Reflector] = {}
        self._namespaced_only: set[tuple[str, str]] = set()  # (context, plural): refused everywhere
        self._seen: dict[str, int] = {}  # context -> newest resourceVersion read or written afresh
        self._lock = threading.Lock()

    # -- answering -------------------------------------------------------------------------------

    def answer(self, context: str, path: str, query: dict[str, Any]) -> Json | None:
        """The answer to `GET path?query` from a cache, or None when it must go to the API
        server (which may start the cache it would have needed)."""
        asked = {k for k, v in query.items() if v not in (None, "")}
        target = self.target(path)
        if target is None or target.rest or not asked <= ANSWERED:
            return None
        if target.name and asked:
            return None
        store = self._ready(context, target)
        if store is None:
            return None
        if target.name:
            return store.get(target.key)  # not held: asked of the API server, which says 404
        return _list(store, target, query)

    def summaries(
        self, context: str, path: str, *, wait: float = 0.0
    ) -> list[tuple[Key, tuple[object, ...]]] | None:
        """The summaries of every object of the collection at `path` (the whole cluster's, or a
        namespace's), when a cache may answer for it as `answer` would; else None. A cache
        still making its first list is waited for up to `wait` seconds: for a caller that
        would otherwise list the whole collection itself, beside it."""
        target = self.target(path)
        if target is None or target.name or target.kind.summary is None:
            return None
        store = self._ready(context, target, wait=wait)
        if store is None:
            return None
        found = store.summaries()
        if target.namespace is not None:  # a namespace's, from a store that may hold more
            found = [(key, summary) for key, summary in found if key[0] == target.namespace]
        return found

    def _ready(self, context: str, target: Target, *, wait: float = 0.0) -> Store | None:
        """The store that may answer about `target`: whole (its first list waited for up to
        `wait` s), with no write of this server on its way to what is asked, and past what the
        server read afresh; None when the API server must answer."""
        reflector = self._reflector(context, target)
        if reflector is None:
            return None
        if wait > 0:
            reflector.wait_synced(wait)
        store = reflector.read()
        if store is None or not store.settled(target.key if target.name else None):
            return None
        return store if self._caught_up(context, store) else None

    def answered(self, context: str, method: str, path: str, answer: Json) -> None:
        """The API server answered `method path` with `answer`. No cached answer may be older
        than what it showed (a rollout seen done, then its pods listed); and a write's object is
        kept at once by the caches holding it, or read afresh until their watch shows the change
        (a delete, a subresource's write)."""
        target = self.target(path)
        if target is None:
            return
        version = _newest(answer)
        if version:
            with self._lock:
                self._seen[context] = max(self._seen.get(context, 0), version)
        if method != "GET":
            self._wrote(context, method, target, answer)

    def _caught_up(self, context: str, store: Store) -> bool:
        """Whether `store` has seen what the API server showed this server: waited for (up to
        `CATCH_UP_S`: a store of a quiet kind may not move) where the caller may wait; where it
        may not, that wait is the caller's to do off the event loop."""
        needed = self._seen.get(context, 0)
        if not needed or store.caught_up(needed, 0):
            return True
        if not may_wait():
            raise WouldWait("a cache catching up")
        return store.caught_up(needed, CATCH_UP_S)

    def _wrote(self, context: str, method: str, target: Target, answer: Json) -> None:
        metadata = answer.get("metadata") or {}
        if target.name:
            key = target.key
        else:  # a create: the answer names the object
            key = (str(metadata.get("namespace") or ""), str(metadata.get("name") or ""))
        whole = method != "DELETE" and not target.rest and answer.get("kind") == target.kind.kind
        for store in self._stores(context, target.kind, key[0]):
            if whole:
                store.written(answer)
            else:
                store.unsettle(key, str(metadata.get("resourceVersion") or ""))

    def target(self, path: str) -> Target | None:
        parts = path.split("?")[0].strip("/").split("/")
        size = 2 if parts[:1] == ["api"] else 3
        prefix, rest = "/" + "/".join(parts[:size]), parts[size:]
        namespace = None
        if rest[:1] == ["namespaces"] and len(rest) >= 3:
            namespace, rest = rest[1], rest[2:]
        if not rest:
            return None
        kind = self._kinds.get((prefix, rest[0]))
        if kind is None or (namespace is not None and not kind.namespaced):
            return None
        if kind.namespaced and namespace is None and len(rest) > 1:
            return None  # a namespaced object named without its namespace
        name = rest[1] if len(rest) > 1 else ""
        return Target(kind, namespace, name, "/".join(rest[2:]))

    # -- the reflectors ---------------------------------------------------------------------------

    def _reflector(self, context: str, target: Target) -> Reflector | None:
        if not self._cached(context, target):
            return None
        scope = self._scope(context, target)
        key = (context, target.kind.plural, scope)
        with self._lock:
            running = self._reflectors.get(key)
            if running is not None and running.refused is not None:
                if isinstance(running.refused, PermissionDenied) and scope is None:
                    self._namespaced_only.add((context, target.kind.plural))
                if time.monotonic() - running.ended < REFUSED_S:
                    return running
            elif running is not None and running.alive:
                return running
            if len(self._reflectors) >= MAX_REFLECTORS:
                self._reflectors = {k: r for k, r in self._reflectors.items() if r.alive}
                if len(self._reflectors) >= MAX_REFLECTORS:
                    return None
            started = Reflector(
                lambda: self.api(context),
                target.kind,
                scope,
                idle_s=self.idle_s,
                fits=self._fits,
            )
            self._reflectors[key] = started.start()
        return started

    def _cached(self, context: str, target: Target) -> bool:
        """Whether a reflector may answer `target`: not a list across namespaces this server
        may read only one by one."""
        return (
            target.namespace is not None
            or not target.kind.namespaced
            or self._everywhere(context, target.kind)
        )

    def _scope(self, context: str, target: Target) -> str | None:
        """The namespace of the reflector that answers `target`, or None: the kind across the
        cluster."""
        if not target.kind.namespaced or self._everywhere(context, target.kind):
            return None
        return target.namespace

    def _everywhere(self, context: str, kind: Kind) -> bool:
        return self.namespaces is None and (context, kind.plural) not in self._namespaced_only

    def _stores(self, context: str, kind: Kind, namespace: str) -> list[Store]:
        with self._lock:
            return [
                r.store
                for (c, plural, scope), r in self._reflectors.items()
                if c == context and plural == kind.plural and scope in (None, namespace)
            ]

    def _fits(self) -> bool:
        with self._lock:
            reflectors = list(self._reflectors.values())
        return sum(r.store.size for r in reflectors) <= self.max_bytes

    def reflectors(self) -> list[Reflector]:
        with self._lock:
            return list(self._reflectors.values())

    def close(self) -> None:
        for reflector in self.reflectors():
            reflector.stop()
        with self._lock:
            self._reflectors.clear()


def _newest(answer: Json) -> int:
    """The newest change `answer` shows: its object's resourceVersion, or a list's newest item's.
    Not a list's own version, which is the cluster's at the time and runs ahead of a quiet
    kind's watch until a bookmark (half a minute or more) carries it there."""
    items = answer.get("items")
    objects = items if isinstance(items, list) else [answer]
    newest = 0
    for obj in objects:
        version = str(((obj or {}).get("metadata") or {}).get("resourceVersion") or "")
        if version.isdigit():
            newest = max(newest, int(version))
    return newest


def _list(store: Store, target: Target, query: dict[str, Any]) -> Json | None:
    label_text = str(query.get("labelSelector") or "")
    field_text = str(query.get("fieldSelector") or "")
    labels = label_match(label_text)
    fields = field_match(field_text, target.kind)
    token = str(query.get("continue") or "")
    after = after_token(token) if token else None
    if labels is None or fields is None or (token and after is None):
        return None
    try:
        limit = max(0, int(query.get("limit") or 0))
    except ValueError:
        return None

    def match(key: Key, entry: Entry) -> bool:
        return labels(entry.labels) and fields(key, entry.fields)

    selected = match if label_text.strip() or field_text.strip() else None
    return store.listing(target.namespace, selected, limit=limit, after=after)


@dataclass(frozen=True)
class CachedApi(WatchedApi):
    """An API whose GETs may be answered by `informers` (when `stale_ok`), and whose writes
    keep them current."""

    informers: Informers | None = None
    stale_ok: bool = False

    def summaries(
        self, path: str, *, wait: float = 0.0
    ) -> list[tuple[Key, tuple[object, ...]]] | None:
        """The kind's summaries of the collection at `path`, from a cache this read may use
        (one still listing waited for up to `wait` s); None when there is none (the caller
        walks the objects instead)."""
        if self.informers is None or not self.stale_ok:
            return None
        return self.informers.summaries(self.context, path, wait=wait)

    def request(
        self,
        method: str,
        path: str,
        *,
        query: dict[str, Any] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        what: str = "",
        timeout: float = REQUEST_TIMEOUT_S,
    ) -> Json:
        informers = self.informers
        if informers is not None and method == "GET" and self.stale_ok:
            cached = informers.answer(self.context, path, query or {})
            if cached is not None:
                return cached
        answer = super().request(
            method,
            path,
            query=query,
            body=body,
            content_type=content_type,
            what=what,
            timeout=timeout,
        )
        if informers is not None and not (query or {}).get("dryRun"):
            informers.answered(self.context, method, path, answer)
        return answer


@dataclass
class CachedClusters(WatchedClusters):
    """`WatchedClusters` whose stale-ok reads may come from watch-backed caches (`Informers`,
    built on the first read that may use them)."""

    namespaces: tuple[str, ...] | None = None  # the server's allow-list
    informers: Informers = field(init=False)

    def __post_init__(self) -> None:
        self.informers = Informers(self.direct, namespaces=self.namespaces)

    def direct(self, context: str | None = None) -> Api:
        """The context's API, every read asking the API server."""
        return super().api(context)

    def api(self, context: str | None = None, *, stale_ok: bool = False) -> Api:
        api = super().api(context)
        return CachedApi(api.client, api.context, self.informers, stale_ok)

    def close(self) -> None:
        self.informers.close()
        super().close()
