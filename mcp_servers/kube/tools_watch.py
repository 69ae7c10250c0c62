"""The `watch_events` tool of the kube server: the events that happened since a resourceVersion.

Agents may not hold a Kubernetes client, yet a watcher needs the cluster's changes as they come.
This tool is the bounded form of a Kubernetes watch: called with the `resource_version` the last
call returned, it opens a watch from there, waits at most `timeout_seconds` for the first event,
lingers a moment for the rest of the burst, and returns them with the resourceVersion to pass
next time. Without a resourceVersion (a first call, or after `resynced`) it lists the current
events instead, so a watcher that starts late still sees the problems that are already there.
A resourceVersion older than the server's history (410 Expired) is answered the same way, with
`resynced: true`: the caller merges duplicates anyway, so a relist loses nothing.

Each event names its `owner`: for a pod, the workload at the top of its controller chain (pod ->
ReplicaSet -> Deployment), since one crash-looping Deployment is one problem however many pods
and restarts report it. An event about a pod that no longer exists says so (`owner.gone`): its
trouble left with it. Reading only; secrets never appear in events.
"""

from __future__ import annotations

from typing import Any

from mcp.server.fastmcp import FastMCP

from core.connection import Api, Clusters, Json
from core.errors import Expired, InvalidArgument, NotFound, PermissionDenied
from mcp_servers.common import arguments
from mcp_servers.common.tools import READ_ONLY, off_loop
from mcp_servers.kube import rows
from mcp_servers.kube.settings import KubeSettings

MAX_TIMEOUT = 25  # below the client's 30 s request timeout of every other call
LINGER_S = 1  # after the first event, how long the rest of a burst may take to arrive
MAX_EVENTS = 200
OWNER_DEPTH = 4
_WORKLOADS = {
    "ReplicaSet": "/apis/apps/v1/namespaces/{ns}/replicasets/{name}",
    "Job": "/apis/batch/v1/namespaces/{ns}/jobs/{name}",
}


def register(mcp: FastMCP, clusters: Clusters, settings: KubeSettings) -> None:
    @mcp.tool(annotations=READ_ONLY)
    async def watch_events(
        namespace: str | None = None,
        resource_version: str = "",
        timeout_seconds: int = 10,
        type: str = "Warning",
        context: str | None = None,
    ) -> Json:
        """Events since `resource_version` (the value a previous call returned), waiting up to
        timeout_seconds (1-25) for the first one; without it, the current events. Each event
        names its `owner` workload (a pod's Deployment, StatefulSet, Job...). type: `Warning`
        (default), `Normal` or `` for both. Pass the returned `resource_version` to the next
        call; `resynced: true` means the history was gone and the current events were listed."""
        if type not in ("Warning", "Normal", ""):
            raise InvalidArgument(f"type {type!r}: use 'Warning', 'Normal' or '' for both")
        if not 1 <= timeout_seconds <= MAX_TIMEOUT:
            raise InvalidArgument(f"timeout_seconds must be 1 to {MAX_TIMEOUT}")
        if resource_version and not resource_version.isdigit():
            raise InvalidArgument("resource_version is the value a previous call returned")
        scope = _scope(settings, namespace)
        return await off_loop(
            _watch,
            clusters.api(context or settings.context),
            scope,
            resource_version,
            timeout_seconds,
            type,
        )


def _scope(settings: KubeSettings, namespace: str | None) -> str | None:
    if namespace:
        return settings.check_namespace(arguments.namespace(namespace))
    if settings.namespaces is None:
        return None
    if len(settings.namespaces) == 1:
        return settings.namespaces[0]
    raise PermissionDenied(
        f"this server may only look at the namespaces {', '.join(settings.namespaces)}: "
        "watch one of them at a time (namespace=...)"
    )


def _path(namespace: str | None) -> str:
    return f"/api/v1/namespaces/{namespace}/events" if namespace else "/api/v1/events"


def _watch(api: Api, namespace: str | None, since: str, timeout: int, wanted: str) -> Json:
    resynced = False
    if since:
        found, version, expired = _stream(api, namespace, since, timeout, stop_at_first=True)
        if not expired and found:
            more, version, expired = _stream(api, namespace, version, LINGER_S, stop_at_first=False)
            found += more
        if not expired:
            return _answer(api, found, version, wanted, resynced=False)
        resynced = True
    listed = api.get(_path(namespace), what=f"events in {namespace or 'the cluster'}")
    version = str((listed.get("metadata") or {}).get("resourceVersion") or "")
    return _answer(api, listed.get("items") or [], version, wanted, resynced=resynced)


def _stream(
    api: Api, namespace: str | None, since: str, timeout: int, *, stop_at_first: bool
) -> tuple[list[Json], str, bool]:
    """Events of a watch from `since` that ends after `timeout` s (or at the first event): the
    events, the last resourceVersion seen, and whether `since` had expired (410)."""
    found: list[Json] = []
    version = since
    try:
        watch = api.watch(
            _path(namespace), what="events", timeout_seconds=timeout, resourceVersion=since
        )
        try:
            for kind, obj in watch:
                version = str((obj.get("metadata") or {}).get("resourceVersion") or version)
                if kind in ("ADDED", "MODIFIED"):
                    found.append(obj)
                if stop_at_first and found:
                    break
        finally:
            watch.close()
    except Expired:
        return found, version, True
    return found, version, False


def _answer(api: Api, events: list[Json], version: str, wanted: str, *, resynced: bool) -> Json:
    kept = [e for e in events if not wanted or e.get("type") == wanted]
    kept.sort(key=rows.event_time)
    owners = _Owners(api)
    items = [_item(e, owners) for e in kept[-MAX_EVENTS:]]
    answer: Json = {"resource_version": version, "items": items, "resynced": resynced}
    if len(kept) > MAX_EVENTS:
        answer["note"] = f"{len(kept) - MAX_EVENTS} older events left out; only the newest shown"
    return answer


def _item(event: Json, owners: _Owners) -> Json:
    involved = event.get("involvedObject") or event.get("regarding") or {}
    namespace = str(involved.get("namespace") or event.get("metadata", {}).get("namespace") or "")
    subject = {"kind": involved.get("kind", ""), "name": involved.get("name", "")}
    if namespace:
        subject["namespace"] = namespace
    return {
        "type": event.get("type", ""),
        "reason": event.get("reason", ""),
        "message": event.get("message") or event.get("note") or "",
        "object": subject,
        "owner": owners.top(subject),
        "count": event.get("count", 1),
        "last_seen": rows.event_time(event),
    }


class _Owners:
    """The workload at the top of an object's controller chain, read once per object per call."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self.known: dict[tuple[str, str, str], dict[str, str]] = {}

    def top(self, subject: dict[str, Any]) -> dict[str, str]:
        key = (subject["kind"], subject.get("namespace", ""), subject["name"])
        if key not in self.known:
            self.known[key] = self._climb(dict(subject))
        return self.known[key]

    def _climb(self, current: dict[str, str]) -> dict[str, str]:
        namespace = current.get("namespace", "")
        if current["kind"] != "Pod" or not namespace:
            return current
        path = f"/api/v1/namespaces/{namespace}/pods/{current['name']}"
        for _ in range(OWNER_DEPTH):
            try:
                obj = self.api.get(path, what=f"{current['kind']} {current['name']}")
            except NotFound:  # the pod is gone, and the trouble it reported with it
                return {**current, "gone": "true"} if current["kind"] == "Pod" else current
            except PermissionDenied:  # hidden: the last one seen stands
                return current
            refs = obj.get("metadata", {}).get("ownerReferences") or []
            ref = next((r for r in refs if r.get("controller")), None)
            if ref is None:
                return current
            current = {"kind": ref["kind"], "name": ref["name"], "namespace": namespace}
            template = _WORKLOADS.get(ref["kind"])
            if template is None:  # a Deployment, StatefulSet, DaemonSet, CronJob: the top
                return current
            path = template.format(ns=namespace, name=ref["name"])
        return current
