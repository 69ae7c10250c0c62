"""What the analyzers read: one list per kind for a scope, taken once, then only looked up.

`take(api, namespace)` lists every kind the analyzers need in one namespace (or the whole
cluster when `namespace` is None), plus the cluster-scoped nodes and StorageClasses and the
metrics.k8s.io usage. One list call per kind keeps a 5,000-pod cluster cheap; everything after
that is dictionary look-ups (`by_name`, `events_for`, `pods_in`). Pod logs are the exception: the
few crashing containers' last lines are read on demand through `log_tail`.

Secrets and ConfigMaps are reduced to their names and keys the moment they arrive: a Secret's
values never enter the snapshot, so no analyzer or playbook can leak one. A kind the identity may
not list (or the cluster does not serve) is left empty and named in `notes`, so a diagnosis is
partial rather than failed.

This module knows the API paths and nothing of rules or fixes.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from mcp_servers.common.errors import NotFound, PermissionDenied, ToolError
from mcp_servers.kube.connection import Api

Json = dict[str, Any]

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


def name_of(obj: Json) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def namespace_of(obj: Json) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "")


@dataclass
class Snapshot:
    api: Api
    namespace: str | None  # None: the whole cluster
    items: dict[str, list[Json]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    _names: dict[str, dict[tuple[str, str], Json]] = field(default_factory=dict)
    _events: dict[tuple[str, str, str], list[Json]] = field(default_factory=dict)
    _pods: dict[str, list[Json]] = field(default_factory=dict)

    def of(self, plural: str) -> list[Json]:
        return self.items.get(plural, [])

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

    def log_tail(self, namespace: str, pod: str, container: str, *, previous: bool) -> list[str]:
        """The last lines a container printed (its previous instance's, for a crash), or []."""
        path = f"/api/v1/namespaces/{namespace}/pods/{pod}/log"
        try:
            text = self.api.text(
                path, container=container, tailLines=LOG_LINES, previous=previous or None
            )
        except ToolError:  # logs are a nicety of the evidence, never a failure
            return []
        return [line for line in text.splitlines() if line.strip()][-LOG_LINES:]


def take(api: Api, namespace: str | None) -> Snapshot:
    snapshot = Snapshot(api, namespace)
    for plural, (prefix, namespaced) in KINDS.items():
        segment = _PATH_PLURAL.get(plural, plural)
        if namespaced and namespace:
            path = f"{prefix}/namespaces/{namespace}/{segment}"
        else:
            path = f"{prefix}/{segment}"
        try:
            listed = api.get(path, what=f"the {plural} list")
        except (NotFound, PermissionDenied) as exc:
            snapshot.notes.append(f"{plural} not read ({exc.message}); findings about them missing")
            listed = {}
        except ToolError:
            raise
        items = [dict(o) for o in listed.get("items") or []]
        if plural in ("secrets", "configmaps"):
            items = [_keys_only(o) for o in items]
        snapshot.items[plural] = items
    return snapshot


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
