"""What the analyzers read: one list per kind for a scope, taken once, then only looked up.

`take(api, namespace)` lists every kind the analyzers need in one namespace (or the whole
cluster when `namespace` is None), plus the cluster-scoped nodes and StorageClasses and the
metrics.k8s.io usage. One list call per kind (`READERS` at a time) keeps a 5,000-pod cluster
cheap; everything after that is dictionary look-ups (`by_name`, `events_for`, `pods_in`). Pod
logs are the exception, read on demand through `log_tail`: the crashing containers' last lines,
a failed Job's, and a bounded sample of Ready pods' (`logs.py`).

Secrets and ConfigMaps are reduced to their names and keys the moment they arrive: a Secret's
values never enter the snapshot, so no analyzer or playbook can leak one.

A diagnosis is partial rather than failed, and never wrong for want of a read: a list the
identity may not read, the cluster does not serve, or the API server keeps failing (500, 429,
504: retried once, as client-go retries) is left out of `items` and named in `notes` with its HTTP
status, and `read(plural)` tells the analyzers which kinds they may trust, so a rule that
concludes from an absence ("no pod matches this selector") stays silent when the pods were not
read. A log that cannot be read is a note too. Only when nothing at all could be read does
`take` fail: an unreachable cluster, or an identity that may read none of it.

Image registries are read on demand too, and only when the kube server was given some
(`registry`): `registry_tags` asks for a repository's tags, `registry_has` for one manifest and
`registry_repositories` for a registry's catalog, each once per snapshot. A registry that cannot
be asked is a note, asked no more in this snapshot (its timeout is paid once), and the
playbooks carry on with what the cluster shows.

This module knows the API paths and nothing of rules or fixes.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from core.connection import Api
from core.errors import NotFound, ToolError
from mcp_servers.kube.registries import ImageName, Registries, TagList

Json = dict[str, Any]
T = TypeVar("T")

# plural -> (API prefix, namespaced)
KINDS: dict[str, tuple[str, bool]] = {
    "pods": ("/api/v1", True),
    "events": ("/api/v1", True),
    "services": ("/api/v1", True),
    "endpoints": ("/api/v1", True),
    "persistentvolumeclaims": ("/api/v1", True),
    "configmaps": ("/api/v1", True),
    "secrets": ("/api/v1", True),
    "nodes": ("/api/v1", False),
    "deployments": ("/apis/apps/v1", True),
    "replicasets": ("/apis/apps/v1", True),
    "statefulsets": ("/apis/apps/v1", True),
    "daemonsets": ("/apis/apps/v1", True),
    "controllerrevisions": ("/apis/apps/v1", True),
    "jobs": ("/apis/batch/v1", True),
    "cronjobs": ("/apis/batch/v1", True),
    "ingresses": ("/apis/networking.k8s.io/v1", True),
    "networkpolicies": ("/apis/networking.k8s.io/v1", True),
    "storageclasses": ("/apis/storage.k8s.io/v1", False),
    "horizontalpodautoscalers": ("/apis/autoscaling/v2", True),
    "poddisruptionbudgets": ("/apis/policy/v1", True),
    "podmetrics": ("/apis/metrics.k8s.io/v1beta1", True),
}
_PATH_PLURAL = {"podmetrics": "pods"}
LOG_LINES = 20
READERS = 4  # lists asked at once: each waits on the API server, most of them on nothing else
RETRY_PAUSE = 0.2  # seconds before the one retry of a read the API server failed


def name_of(obj: Json) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def namespace_of(obj: Json) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "")


def pod_ready(pod: Json) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


@dataclass
class Snapshot:
    api: Api
    namespace: str | None  # None: the whole cluster
    items: dict[str, list[Json]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    registry: Registries | None = None  # asked on demand (`registry_tags`); None: offline
    _names: dict[str, dict[tuple[str, str], Json]] = field(default_factory=dict)
    _events: dict[tuple[str, str, str], list[Json]] = field(default_factory=dict)
    _pods: dict[str, list[Json]] = field(default_factory=dict)
    _tags: dict[str, TagList | None] = field(default_factory=dict)
    _catalogs: dict[str, list[str] | None] = field(default_factory=dict)
    _manifests: dict[str, bool | None] = field(default_factory=dict)
    _silent: set[str] = field(default_factory=set)  # registry hosts that could not be asked

    def of(self, plural: str) -> list[Json]:
        return self.items.get(plural, [])

    def read(self, *plurals: str) -> bool:
        """Whether every one of these kinds was listed, so that an absence in them is a fact."""
        return all(plural in self.items for plural in plurals)

    def by_name(self, plural: str, namespace: str, name: str) -> Json | None:
        if plural not in self._names:
            self._names[plural] = {(namespace_of(o), name_of(o)): o for o in self.of(plural)}
        return self._names[plural].get((namespace, name))

    def events_for(self, kind: str, namespace: str, name: str) -> list[Json]:
        """Events about one object, newest last."""
        if not self._events:
            index: dict[tuple[str, str, str], list[Json]] = defaultdict(list)
            for event in self.of("events"):
                obj = event.get("involvedObject") or event.get("regarding") or {}
                key = (str(obj.get("kind")), str(obj.get("namespace") or ""), str(obj.get("name")))
                index[key].append(event)
            for found in index.values():
                found.sort(key=_event_time)
            self._events = dict(index)
        return self._events.get((kind, namespace, name), [])

    def pods_in(self, namespace: str) -> list[Json]:
        if not self._pods:
            grouped: dict[str, list[Json]] = defaultdict(list)
            for pod in self.of("pods"):
                grouped[namespace_of(pod)].append(pod)
            self._pods = dict(grouped)
        return self._pods.get(namespace, [])

    def usage(self, namespace: str, pod: str, container: str) -> Json:
        """metrics.k8s.io usage of one container ({"cpu": "12m", "memory": "80Mi"}), or {}."""
        metrics = self.by_name("podmetrics", namespace, pod) or {}
        for entry in metrics.get("containers") or []:
            if entry.get("name") == container:
                return dict(entry.get("usage") or {})
        return {}

    def log_tail(
        self, namespace: str, pod: str, container: str, *, previous: bool, lines: int = LOG_LINES
    ) -> list[str]:
        """The last lines a container printed (its previous instance's, for a crash), or []."""
        path = f"/api/v1/namespaces/{namespace}/pods/{pod}/log"
        try:
            text = self.api.text(
                path, container=container, tailLines=lines, previous=previous or None
            )
        except ToolError as exc:  # logs are evidence, never a failure of the diagnosis
            # 400: no previous instance or not started yet; 404: the pod is gone meanwhile
            if status_of(exc) not in (400, 404):
                self.notes.append(f"logs of pod {namespace}/{pod} not read: {_why(exc)}")
            return []
        return [line for line in text.splitlines() if line.strip()][-lines:]

    def registry_tags(self, image: ImageName) -> TagList | None:
        """What the registry lists for `image`'s repository (`found` False: it holds no such
        repository), or None when no registry is configured for it or it could not be asked."""
        repository = image.repository
        if repository not in self._tags:
            self._tags[repository] = self._ask(
                image.host, lambda r: r.tags(image, context=self.api.context)
            )
        return self._tags[repository]

    def registry_has(self, image: ImageName) -> bool | None:
        """Whether the registry holds `image`'s manifest (the question for a digest, which no
        tag list answers), or None when it could not be asked."""
        if image.key not in self._manifests:
            self._manifests[image.key] = self._ask(
                image.host, lambda r: r.exists(image, context=self.api.context)
            )
        return self._manifests[image.key]

    def registry_repositories(self, host: str) -> list[str] | None:
        """The repository paths a registry's catalog lists, or None when it serves none or
        could not be asked (Docker Hub serves none)."""
        if host not in self._catalogs:
            self._catalogs[host] = self._ask(
                host, lambda r: r.repositories(host, context=self.api.context), quiet=NotFound
            )
        return self._catalogs[host]

    def _ask(
        self,
        host: str,
        question: Callable[[Registries], T],
        *,
        quiet: type[ToolError] | None = None,
    ) -> T | None:
        if self.registry is None or not self.registry.configured or host in self._silent:
            return None
        try:
            return question(self.registry)
        except ToolError as exc:
            if quiet is not None and isinstance(exc, quiet):
                return None
            self._silent.add(host)
            self.notes.append(
                f"registry {host} not asked: {exc.message}; image fixes come from what the "
                "cluster ran"
            )
            return None


def take(api: Api, namespace: str | None, *, registry: Registries | None = None) -> Snapshot:
    snapshot = Snapshot(api, namespace, registry=registry)
    failures: list[ToolError] = []

    def read(plural: str) -> Json | ToolError:
        prefix, namespaced = KINDS[plural]
        segment = _PATH_PLURAL.get(plural, plural)
        if namespaced and namespace:
            path = f"{prefix}/namespaces/{namespace}/{segment}"
        else:
            path = f"{prefix}/{segment}"
        try:
            return _list(api, path, plural)
        except ToolError as exc:
            return exc

    with ThreadPoolExecutor(READERS, thread_name_prefix="snapshot") as pool:
        answers = dict(zip(KINDS, pool.map(read, KINDS), strict=True))
    for plural, listed in answers.items():
        if isinstance(listed, ToolError):
            exc = listed
            failures.append(exc)
            snapshot.notes.append(
                f"{plural} not read: {_why(exc)}; findings that need them are left out"
            )
            continue
        items = [dict(o) for o in listed.get("items") or []]
        if plural in ("secrets", "configmaps"):
            items = [_keys_only(o) for o in items]
        snapshot.items[plural] = items
    if not snapshot.items and failures:  # not one list: nothing to diagnose, say why
        last = failures[-1]
        raise type(last)(f"nothing could be read for a diagnosis: {last.message}") from last
    return snapshot


def _list(api: Api, path: str, plural: str) -> Json:
    """One list, retried once when the API server failed it (5xx, 429) rather than refused it."""
    try:
        return api.get(path, what=f"the {plural} list")
    except ToolError as exc:
        if not exc.retryable:
            raise
    time.sleep(RETRY_PAUSE)
    return api.get(path, what=f"the {plural} list")


def status_of(exc: ToolError) -> int | None:
    """The HTTP status behind a tool error (the client's exception is chained), if any."""
    status = getattr(exc.__cause__, "status", None)
    return status if isinstance(status, int) else None


def _why(exc: ToolError) -> str:
    status = status_of(exc)
    return f"HTTP {status} ({exc.message})" if status else exc.message


def _keys_only(obj: Json) -> Json:
    """A Secret or ConfigMap with its values gone: the names of its keys stay, nothing else."""
    keys = sorted({*(obj.get("data") or {}), *(obj.get("binaryData") or {})})
    meta = obj.get("metadata") or {}
    return {
        "kind": obj.get("kind"),
        "metadata": {"name": meta.get("name"), "namespace": meta.get("namespace")},
        "keys": keys,
    }


def _event_time(event: Json) -> str:
    return str(
        event.get("lastTimestamp")
        or event.get("eventTime")
        or (event.get("metadata") or {}).get("creationTimestamp")
        or ""
    )


_OWNER_PLURALS = {"ReplicaSet": "replicasets", "Job": "jobs"}


def owner_ref(snapshot: Snapshot, obj: Json) -> tuple[str, str] | None:
    """The (kind, name) of `obj`'s controller, or None."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return str(ref.get("kind")), str(ref.get("name"))
    return None


def workload_of(snapshot: Snapshot, pod: Json) -> tuple[str, str]:
    """The object a person changes to change this pod: its Deployment (through the ReplicaSet),
    StatefulSet, DaemonSet or Job, or the pod itself when nothing controls it."""
    namespace = namespace_of(pod)
    owner = owner_ref(snapshot, pod)
    if owner is None:
        return "Pod", name_of(pod)
    kind, name = owner
    if kind == "ReplicaSet":
        replicaset = snapshot.by_name("replicasets", namespace, name)
        above = owner_ref(snapshot, replicaset) if replicaset else None
        if above is not None and above[0] == "Deployment":
            return above
    return kind, name
