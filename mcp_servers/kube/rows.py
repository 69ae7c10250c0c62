"""The compact shapes read tools answer with: summary rows per kind and selected fields.

A summary row is what `kubectl get` shows as columns, as a small dict: every row has `name`
(and `namespace` when namespaced), plus the few status-ish fields that say whether the object is
healthy (pods: ready/status/restarts/node/age; deployments: ready/up_to_date/available; ...).
Kinds without a dedicated row get name, namespace and age. Field selection walks dotted paths
with `[*]` and `[N]` (`spec.containers[*].image`), which is what a model asks for most often,
without a JSONPath dependency or any evaluation of expressions.

This module only shapes JSON it is given; it never talks to a cluster.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from core.errors import InvalidArgument

Json = dict[str, Any]
Row = dict[str, Any]

_PATH = re.compile(r"^[A-Za-z0-9_\-./\[\]*]+$")
_STEP = re.compile(r"([^.\[\]]+)|\[(\*|\d+)\]")


def age(metadata: Json, *, now: datetime | None = None) -> str:
    stamp = metadata.get("creationTimestamp")
    if not stamp:
        return ""
    created = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    seconds = int(((now or datetime.now(UTC)) - created).total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= 2 * size or (unit == "m" and seconds >= size):
            return f"{seconds // size}{unit}"
    return f"{max(seconds, 0)}s"


def pod_status(pod: Json) -> str:
    """The STATUS column of `kubectl get pods`: a waiting/terminated reason beats the phase."""
    if pod.get("metadata", {}).get("deletionTimestamp"):
        return "Terminating"
    status = pod.get("status", {})
    reason = status.get("reason")
    for c in status.get("initContainerStatuses") or []:
        state = c.get("state", {})
        if "waiting" in state and state["waiting"].get("reason") not in (None, "PodInitializing"):
            return f"Init:{state['waiting']['reason']}"
    for c in status.get("containerStatuses") or []:
        state = c.get("state", {})
        if "waiting" in state and state["waiting"].get("reason"):
            reason = state["waiting"]["reason"]
        elif "terminated" in state and state["terminated"].get("reason"):
            reason = state["terminated"]["reason"]
    return str(reason or status.get("phase") or "Unknown")


def _pod(obj: Json) -> Row:
    statuses = obj.get("status", {}).get("containerStatuses") or []
    total = len(obj.get("spec", {}).get("containers") or []) or len(statuses)
    return {
        "ready": f"{sum(1 for c in statuses if c.get('ready'))}/{total}",
        "status": pod_status(obj),
        "restarts": sum(int(c.get("restartCount", 0)) for c in statuses),
        "node": obj.get("spec", {}).get("nodeName", ""),
    }


def _deployment(obj: Json) -> Row:
    spec, status = obj.get("spec", {}), obj.get("status", {})
    return {
        "ready": f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 1)}",
        "up_to_date": status.get("updatedReplicas", 0),
        "available": status.get("availableReplicas", 0),
    }


def _replicated(obj: Json) -> Row:
    spec, status = obj.get("spec", {}), obj.get("status", {})
    return {
        "desired": spec.get("replicas", 1),
        "current": status.get("replicas", 0),
        "ready": status.get("readyReplicas", 0),
    }


def _daemonset(obj: Json) -> Row:
    status = obj.get("status", {})
    return {
        "desired": status.get("desiredNumberScheduled", 0),
        "ready": status.get("numberReady", 0),
        "up_to_date": status.get("updatedNumberScheduled", 0),
        "available": status.get("numberAvailable", 0),
    }


def _service(obj: Json) -> Row:
    spec = obj.get("spec", {})
    ports = [f"{p.get('port')}/{p.get('protocol', 'TCP')}" for p in spec.get("ports") or []]
    return {"type": spec.get("type", "ClusterIP"), "cluster_ip": spec.get("clusterIP", ""),
            "ports": ",".join(ports)}  # fmt: skip


def _node(obj: Json) -> Row:
    conditions = {
        c.get("type"): c.get("status") for c in obj.get("status", {}).get("conditions") or []
    }
    status = "Ready" if conditions.get("Ready") == "True" else "NotReady"
    if obj.get("spec", {}).get("unschedulable"):
        status += ",SchedulingDisabled"
    labels = obj.get("metadata", {}).get("labels") or {}
    roles = [k.rpartition("/")[2] for k in labels if k.startswith("node-role.kubernetes.io/")]
    version = obj.get("status", {}).get("nodeInfo", {}).get("kubeletVersion", "")
    return {"status": status, "roles": ",".join(roles) or "<none>", "version": version}


def _job(obj: Json) -> Row:
    spec, status = obj.get("spec", {}), obj.get("status", {})
    return {"completions": f"{status.get('succeeded', 0)}/{spec.get('completions', 1)}",
            "failed": status.get("failed", 0), "active": status.get("active", 0)}  # fmt: skip


def _claim(obj: Json) -> Row:
    status = obj.get("status", {})
    return {"status": status.get("phase", ""), "volume": obj.get("spec", {}).get("volumeName", ""),
            "capacity": status.get("capacity", {}).get("storage", ""),
            "storage_class": obj.get("spec", {}).get("storageClassName", "")}  # fmt: skip


def _keys(obj: Json) -> Row:
    return {"keys": sorted({*(obj.get("data") or {}), *(obj.get("binaryData") or {})})}


def secret_keys(obj: Json) -> list[str]:
    # A real API server folds stringData into data; reading both also covers one that does not.
    return sorted({*(obj.get("data") or {}), *(obj.get("stringData") or {})})


def _secret(obj: Json) -> Row:
    return {"type": obj.get("type", ""), "keys": secret_keys(obj)}


def _event(obj: Json) -> Row:
    involved = obj.get("involvedObject") or obj.get("regarding") or {}
    return {"type": obj.get("type", ""), "reason": obj.get("reason", ""),
            "object": f"{involved.get('kind', '')}/{involved.get('name', '')}",
            "message": obj.get("message") or obj.get("note", ""),
            "count": obj.get("count", 1), "last_seen": event_time(obj)}  # fmt: skip


def _phase(obj: Json) -> Row:
    return {"status": obj.get("status", {}).get("phase", "")}


_ROWS: dict[str, Callable[[Json], Row]] = {
    "Pod": _pod, "Deployment": _deployment, "ReplicaSet": _replicated,
    "StatefulSet": _replicated, "ReplicationController": _replicated, "DaemonSet": _daemonset,
    "Service": _service, "Node": _node, "Job": _job, "PersistentVolumeClaim": _claim,
    "PersistentVolume": _phase, "Namespace": _phase, "ConfigMap": _keys, "Secret": _secret,
    "Event": _event,
}  # fmt: skip


def summary(obj: Json, *, kind: str, now: datetime | None = None) -> Row:
    """The columns `kubectl get` shows; `now` (the cluster's) for the age, else this machine's."""
    metadata = obj.get("metadata", {})
    row: Row = {"name": metadata.get("name", "")}
    if metadata.get("namespace"):
        row["namespace"] = metadata["namespace"]
    shape = _ROWS.get(kind)
    if shape is not None:
        row.update(shape(obj))
    row["age"] = age(metadata, now=now)
    return row


def event_time(event: Json) -> str:
    return str(
        event.get("lastTimestamp")
        or (event.get("series") or {}).get("lastObservedTime")
        or event.get("eventTime")
        or event.get("metadata", {}).get("creationTimestamp")
        or ""
    )


def check_paths(paths: list[str]) -> list[str]:
    if not paths or len(paths) > 20:
        raise InvalidArgument("fields: give 1 to 20 dotted paths, e.g. ['status.phase']")
    for path in paths:
        if len(path) > 200 or not _PATH.match(path) or ".." in path:
            raise InvalidArgument(
                f"field path {path!r} is not a dotted path like 'spec.containers[*].image'"
            )
    return paths


def select(obj: Json, path: str) -> Any:
    """The value at `path` (None when absent); `[*]` collects from every list element."""
    values: list[Any] = [obj]
    spread = False
    for name, index in _STEP.findall(path.removeprefix(".")):
        nxt: list[Any] = []
        for value in values:
            if name:
                if isinstance(value, dict) and name in value:
                    nxt.append(value[name])
            elif isinstance(value, list):
                if index == "*":
                    spread = True
                    nxt.extend(value)
                elif int(index) < len(value):
                    nxt.append(value[int(index)])
        values = nxt
    if spread:
        return values
    return values[0] if values else None


def fields(obj: Json, paths: list[str]) -> Row:
    metadata = obj.get("metadata", {})
    row: Row = {"name": metadata.get("name", "")}
    if metadata.get("namespace"):
        row["namespace"] = metadata["namespace"]
    row.update({path: select(obj, path) for path in paths})
    return row
