"""Events as the control plane and kubelets report them (core/v1 `Event`).

The same event repeated for the same object (a BackOff every ten seconds, an Unhealthy probe)
is folded into one Event whose `count` and `lastTimestamp` move, as Kubernetes' event correlator
does, so `kubectl get events` reads "x12 over 3m" instead of twelve rows. Events about
cluster-scoped objects (nodes) live in the `default` namespace. Events expire an hour after their
last occurrence, like the API server's event TTL.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from sandbox.clock import parse_time
from sandbox.errors import ApiError
from sandbox.objects import Objects, WriteOptions
from sandbox.store import Obj

EVENTS = ("", "events")
TTL = 3600.0  # sandbox seconds an event outlives its last occurrence


class EventRecorder:
    def __init__(self, objects: Objects) -> None:
        self._objects = objects
        self._latest: dict[tuple[str, ...], tuple[str, str]] = {}  # correlation -> (ns, name)
        self._correlation: dict[tuple[str, str], tuple[str, ...]] = {}  # and back, to forget
        self._expiry: deque[tuple[float, str, str]] = deque()
        self._seq = 0

    def record(
        self,
        obj: Obj,
        *,
        reason: str,
        message: str,
        component: str,
        warning: bool = False,
        host: str = "",
        field_path: str = "",
    ) -> Obj | None:
        """Report `reason: message` about `obj` (`field_path` names a container, as kubelets
        do: `spec.containers{web}`). Returns the Event written, or None when it could not be
        (its namespace is going away): events are best effort, as in Kubernetes."""
        rt = self._objects.registry.for_group(*EVENTS)
        assert rt is not None
        clock = self._objects.clock
        now = clock.seconds()
        self._expire(now)
        meta = obj["metadata"]
        namespace = meta.get("namespace") or "default"
        correlation = (namespace, meta.get("uid", ""), field_path, reason, message, component)
        found = self._latest.get(correlation)
        existing = self._objects.store.get(EVENTS, *found) if found else None
        try:
            if existing is not None:
                updated = {**existing, "count": int(existing.get("count") or 1) + 1}
                updated["lastTimestamp"] = clock.timestamp()
                written = self._objects.write(rt, updated, existing, manager=component)
            else:
                event = self._event(obj, namespace, reason, message, component, warning, host)
                if field_path:
                    event["involvedObject"]["fieldPath"] = field_path
                opts = WriteOptions(field_manager=component, system=True)
                written = self._objects.create(
                    rt, event, namespace=namespace, opts=opts, operation=None
                )
                written_as = (namespace, written["metadata"]["name"])
                self._latest[correlation] = written_as
                self._correlation[written_as] = correlation
        except ApiError:
            return None
        self._expiry.append((now + TTL, namespace, written["metadata"]["name"]))
        return written

    def _event(
        self,
        obj: Obj,
        namespace: str,
        reason: str,
        message: str,
        component: str,
        warning: bool,
        host: str,
    ) -> Obj:
        meta = obj["metadata"]
        self._seq += 1
        nanos = int(self._objects.clock.seconds() * 1e9) + self._seq
        involved: dict[str, Any] = {
            "kind": obj.get("kind", ""),
            "name": meta["name"],
            "uid": meta.get("uid", ""),
            "apiVersion": obj.get("apiVersion", ""),
            "resourceVersion": meta.get("resourceVersion", ""),
        }
        if meta.get("namespace"):
            involved["namespace"] = meta["namespace"]
        stamp = self._objects.clock.timestamp()
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"{meta['name']}.{nanos:x}", "namespace": namespace},
            "involvedObject": involved,
            "reason": reason,
            "message": message,
            "type": "Warning" if warning else "Normal",
            "source": {"component": component, **({"host": host} if host else {})},
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
            "reportingComponent": component,
            "reportingInstance": host,
        }

    def _expire(self, now: float) -> None:
        store = self._objects.store
        while self._expiry and self._expiry[0][0] <= now:
            _, namespace, name = self._expiry.popleft()
            event = store.get(EVENTS, namespace, name)
            if event is not None and _last_seen(event) + TTL > now:
                continue  # it happened again meanwhile: a later entry expires it
            if event is not None:
                store.remove(EVENTS, namespace, name, store.stamp(event))
            correlation = self._correlation.pop((namespace, name), None)
            if correlation is not None:
                self._latest.pop(correlation, None)


def _last_seen(event: Obj) -> float:
    stamp = event.get("lastTimestamp") or event["metadata"].get("creationTimestamp")
    return parse_time(stamp).timestamp() if stamp else 0.0
