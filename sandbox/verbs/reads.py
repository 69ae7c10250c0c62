"""get, list, watch, pods/log and metrics.k8s.io: reads, as JSON or as kubectl's Tables."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from sandbox import listing, subresources, watch
from sandbox.errors import BadRequest, MethodNotAllowed, not_found
from sandbox.http import dumps, end_stream, respond, start_stream, stream_chunk
from sandbox.logs import LogKey, LogQuery
from sandbox.selectors import FieldSelector
from sandbox.store import Obj
from sandbox.tables import render_table
from sandbox.verbs.exchange import Exchange

TABLE_CONTENT_TYPE = "application/json;as=Table;v=v1;g=meta.k8s.io"


async def read(ex: Exchange) -> None:
    target, request = ex.target, ex.request
    if target.verb == "watch":
        await _watch(ex)
    elif target.verb == "list":
        query = listing.ListQuery.parse(ex.rt, request.query, namespace=ex.namespace or None)
        items, meta = listing.select(ex.cluster.store, ex.rt, query)
        if request.wants_table:
            await _table(ex, items, meta)
        else:
            await respond(ex.send, 200, dumps(listing.envelope(ex.rt, items, meta)))
    else:
        obj = ex.cluster.objects.get(ex.rt, ex.namespace, target.name)
        if target.subresource == "log":
            await _logs(ex, obj)
        elif target.subresource == "scale":
            await respond(ex.send, 200, dumps(subresources.scale_of(obj)))
        elif request.wants_table:
            await _table(ex, [obj], {"resourceVersion": obj["metadata"].get("resourceVersion")})
        else:
            await respond(ex.send, 200, dumps(obj))


async def _table(ex: Exchange, items: list[Obj], meta: dict[str, Any]) -> None:
    table = render_table(
        ex.rt,
        items,
        include_object=ex.request.query.get("includeObject", "Metadata"),
        now=ex.cluster.clock.now(),
        list_meta=meta,
    )
    await respond(ex.send, 200, dumps(table), content_type=TABLE_CONTENT_TYPE)


async def _watch(ex: Exchange) -> None:
    request, rt = ex.request, ex.rt
    namespace = ex.namespace or None
    query = listing.ListQuery.parse(rt, request.query, namespace=namespace)
    if ex.target.name:  # GET .../pods/x?watch=1 watches that one object
        by_name = FieldSelector.parse(f"metadata.name={ex.target.name}")
        query = listing.ListQuery(namespace=namespace, labels=query.labels, fields=by_name)
    timeout = request.int_param("timeoutSeconds")
    spec = watch.WatchRequest(
        rt=rt,
        query=query,
        resource_version=request.query.get("resourceVersion", ""),
        send_initial_events=request.flag("sendInitialEvents"),
        bookmarks=request.flag("allowWatchBookmarks"),
        timeout=float(timeout) if timeout and timeout > 0 else watch.DEFAULT_TIMEOUT,
    )
    spec.check(request.query.get("resourceVersionMatch", ""))
    content_type = TABLE_CONTENT_TYPE if request.wants_table else "application/json"
    include = request.query.get("includeObject", "Metadata")

    def render(obj: Obj) -> Any:
        if not request.wants_table:
            return obj
        return render_table(rt, [obj], include_object=include, now=ex.cluster.clock.now())

    await watch.serve(
        ex.cluster.store,
        spec,
        ex.send,
        ex.receive,
        render,
        content_type=content_type,
        streams=ex.streams,
    )


async def _logs(ex: Exchange, pod: Obj) -> None:
    request = ex.request
    meta, spec = pod["metadata"], pod.get("spec") or {}
    container = _container(pod, request.query.get("container") or "")
    if not spec.get("nodeName"):
        # Kubernetes has no log location for an unscheduled pod and answers 204, no body.
        await respond(ex.send, 204, b"", content_type="text/plain")
        return
    query = LogQuery(
        previous=request.flag("previous"),
        tail_lines=request.int_param("tailLines"),
        since_seconds=request.int_param("sinceSeconds"),
        limit_bytes=request.int_param("limitBytes"),
        timestamps=request.flag("timestamps"),
    )
    key = (meta["namespace"], meta["name"], container)
    if query.previous and not ex.cluster.logs.has_previous(*key):
        raise BadRequest(
            f'previous terminated container "{container}" in pod "{meta["name"]}" not found'
        )
    text = ex.cluster.logs.read(key, query)
    if request.flag("follow"):
        await _follow(ex, key, text)
    else:
        await respond(ex.send, 200, text.encode(), content_type="text/plain")


def _container(pod: Obj, asked: str) -> str:
    spec, name = pod.get("spec") or {}, pod["metadata"]["name"]
    names = [c["name"] for c in spec.get("containers") or []]
    if not asked:
        if len(names) != 1:
            raise BadRequest(
                f"a container name must be specified for pod {name}, "
                f"choose one of: [{' '.join(names)}]"
            )
        return str(names[0])
    if asked not in names + [c["name"] for c in spec.get("initContainers") or []]:
        raise BadRequest(f"container {asked} is not valid for pod {name}")
    return asked


async def _follow(ex: Exchange, key: LogKey, backlog: str) -> None:
    logs, send = ex.cluster.logs, ex.send
    queue = logs.follow(key)

    async def disconnected() -> None:
        # A request body (empty for a GET) may come first: only a disconnect ends the stream.
        message = await ex.receive()
        while message["type"] != "http.disconnect":
            message = await ex.receive()

    gone = asyncio.create_task(disconnected())
    try:
        await start_stream(send, "text/plain")
        if backlog:
            await stream_chunk(send, backlog.encode())
        while not gone.done() and not ex.streams.closing:
            if ex.cluster.store.get(("", "pods"), key[0], key[1]) is None:
                break  # the pod is gone: so is its log stream
            with contextlib.suppress(TimeoutError):
                line = await asyncio.wait_for(queue.get(), 0.2)
                await stream_chunk(send, (line + "\n").encode())
        await end_stream(send)
    finally:
        gone.cancel()
        logs.unfollow(key, queue)


async def metrics(ex: Exchange) -> None:
    rt, target, book = ex.rt, ex.target, ex.cluster.metrics
    if target.verb == "watch":
        raise MethodNotAllowed("metrics cannot be watched")
    if target.name:
        one = (
            book.pod(target.namespace, target.name)
            if rt.kind == "PodMetrics"
            else book.node(target.name)
        )
        if one is None:
            raise not_found(rt.plural, rt.group, target.name)
        await respond(ex.send, 200, dumps(one))
        return
    many = book.pods(target.namespace or None) if rt.kind == "PodMetrics" else book.nodes()
    body = {"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": {}, "items": many}
    await respond(ex.send, 200, dumps(body))
