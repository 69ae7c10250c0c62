"""Resource requests, verb by verb: turn a routed request into object-service calls and replies.

Reads may be answered as `meta.k8s.io/v1 Table` when the client asks (kubectl's human output);
writes honour `dryRun`, `fieldManager`, `fieldValidation` and `force` and send field-validation
warnings back in `Warning` headers. Subresources with their own semantics live in
sandbox.subresources; the review kinds in sandbox.reviews.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from sandbox import listing, reviews, subresources, watch
from sandbox.auth import UserInfo
from sandbox.cluster import Cluster
from sandbox.errors import BadRequest, MethodNotAllowed, not_found
from sandbox.http import (
    PATCH_TYPES,
    PROTOBUF,
    Receive,
    Request,
    Send,
    decode_object,
    dumps,
    end_stream,
    respond,
    start_stream,
    stream_chunk,
)
from sandbox.lifecycle import DeleteOptions
from sandbox.logs import LogQuery
from sandbox.objects import WriteOptions
from sandbox.protobuf import decode_object as decode_protobuf
from sandbox.registry import VIRTUAL_GROUPS, ResourceType
from sandbox.routing import Route
from sandbox.store import Obj
from sandbox.tables import render_table

TABLE_CONTENT_TYPE = "application/json;as=Table;v=v1;g=meta.k8s.io"
_DECODERS: dict[str, Callable[[bytes], Any]] = {PROTOBUF: decode_protobuf}


async def resource(
    cluster: Cluster,
    target: Route,
    request: Request,
    user: UserInfo,
    receive: Receive,
    send: Send,
    *,
    streams: watch.Streams,
) -> None:
    rt = target.rt
    assert rt is not None
    if rt.group == "metrics.k8s.io":
        await _metrics(cluster, rt, target, send)
    elif rt.group in VIRTUAL_GROUPS:
        body = decode_object(request, _DECODERS)
        answer = reviews.answer(
            rt,
            body,
            user=user,
            namespace=target.namespace,
            authz=cluster.authz,
            authn=cluster.authn,
            now=cluster.clock.now(),
        )
        await respond(send, 201, dumps(answer))
    elif target.verb in ("get", "list", "watch"):
        await _read(cluster, rt, target, request, receive, send, streams)
    elif target.verb == "delete" or target.verb == "deletecollection":
        await _delete(cluster, rt, target, request, send)
    else:
        await _write(cluster, rt, target, request, user, send)


# -- reads -----------------------------------------------------------------------------------


async def _read(
    cluster: Cluster,
    rt: ResourceType,
    target: Route,
    request: Request,
    receive: Receive,
    send: Send,
    streams: watch.Streams,
) -> None:
    namespace = target.namespace if rt.namespaced else ""
    if target.verb == "watch":
        await _watch(cluster, rt, target, request, receive, send, streams)
        return
    if target.verb == "list":
        query = listing.ListQuery.parse(
            rt, request.query, namespace=namespace or None if rt.namespaced else None
        )
        items, meta = listing.select(cluster.store, rt, query)
        if request.wants_table:
            await _table(cluster, rt, request, send, items, meta)
        else:
            await respond(send, 200, dumps(listing.envelope(rt, items, meta)))
        return
    obj = cluster.objects.get(rt, namespace, target.name)
    if target.subresource == "log":
        await _logs(cluster, obj, request, receive, send, streams)
    elif target.subresource == "scale":
        await respond(send, 200, dumps(subresources.scale_of(obj)))
    elif request.wants_table:
        await _table(
            cluster,
            rt,
            request,
            send,
            [obj],
            {"resourceVersion": obj["metadata"].get("resourceVersion", "")},
        )
    else:
        await respond(send, 200, dumps(obj))


async def _table(
    cluster: Cluster,
    rt: ResourceType,
    request: Request,
    send: Send,
    items: list[Obj],
    meta: dict[str, Any],
) -> None:
    table = render_table(
        rt,
        items,
        include_object=request.query.get("includeObject", "Metadata"),
        now=cluster.clock.now(),
        list_meta=meta,
    )
    await respond(send, 200, dumps(table), content_type=TABLE_CONTENT_TYPE)


async def _watch(
    cluster: Cluster,
    rt: ResourceType,
    target: Route,
    request: Request,
    receive: Receive,
    send: Send,
    streams: watch.Streams,
) -> None:
    namespace = target.namespace if rt.namespaced and target.namespace else None
    query = listing.ListQuery.parse(rt, request.query, namespace=namespace)
    if target.name:  # GET .../pods/x?watch=1 is a watch on that one object
        from sandbox.selectors import FieldSelector

        query = listing.ListQuery(
            namespace=namespace,
            labels=query.labels,
            fields=FieldSelector.parse(f"metadata.name={target.name}"),
        )
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
    if request.wants_table:
        include = request.query.get("includeObject", "Metadata")

        def render(obj: Obj) -> Any:
            return render_table(rt, [obj], include_object=include, now=cluster.clock.now())

        content_type = TABLE_CONTENT_TYPE
    else:

        def render(obj: Obj) -> Any:
            return obj

        content_type = "application/json"
    await watch.serve(
        cluster.store, spec, send, receive, render, content_type=content_type, streams=streams
    )


async def _logs(
    cluster: Cluster,
    pod: Obj,
    request: Request,
    receive: Receive,
    send: Send,
    streams: watch.Streams,
) -> None:
    meta, spec = pod["metadata"], pod.get("spec") or {}
    names = [c["name"] for c in spec.get("containers") or []]
    all_names = names + [c["name"] for c in spec.get("initContainers") or []]
    container = request.query.get("container") or ""
    if not container:
        if len(names) != 1:
            raise BadRequest(
                f"a container name must be specified for pod {meta['name']}, "
                f"choose one of: [{' '.join(names)}]"
            )
        container = names[0]
    if container not in all_names:
        raise BadRequest(f"container {container} is not valid for pod {meta['name']}")
    if not spec.get("nodeName"):
        # Kubernetes has no log location for an unscheduled pod and answers 204, no body.
        await respond(send, 204, b"", content_type="text/plain")
        return
    query = LogQuery(
        previous=request.flag("previous"),
        tail_lines=request.int_param("tailLines"),
        since_seconds=request.int_param("sinceSeconds"),
        limit_bytes=request.int_param("limitBytes"),
        timestamps=request.flag("timestamps"),
    )
    key = (meta["namespace"], meta["name"], container)
    if query.previous and not cluster.logs.has_previous(*key):
        raise BadRequest(
            f'previous terminated container "{container}" in pod "{meta["name"]}" not found'
        )
    text = cluster.logs.read(key, query)
    if not request.flag("follow"):
        await respond(send, 200, text.encode(), content_type="text/plain")
        return
    await _follow(cluster, key, text, receive, send, streams)


async def _follow(
    cluster: Cluster,
    key: tuple[str, str, str],
    backlog: str,
    receive: Receive,
    send: Send,
    streams: watch.Streams,
) -> None:
    queue = cluster.logs.follow(key)

    async def disconnected() -> None:
        await receive()

    gone = asyncio.create_task(disconnected())
    try:
        await start_stream(send, "text/plain")
        if backlog:
            await stream_chunk(send, backlog.encode())
        while not gone.done() and not streams.closing:
            if cluster.store.get(("", "pods"), key[0], key[1]) is None:
                break
            with contextlib.suppress(TimeoutError):
                line = await asyncio.wait_for(queue.get(), 0.2)
                await stream_chunk(send, (line + "\n").encode())
        await end_stream(send)
    finally:
        gone.cancel()
        cluster.logs.unfollow(key, queue)


# -- writes ----------------------------------------------------------------------------------


def _write_options(request: Request, target: Route) -> WriteOptions:
    dry_run = request.query.get("dryRun", "")
    if dry_run not in ("", "All"):
        raise BadRequest(f'unsupported dryRun value "{dry_run}": the only supported value is All')
    manager = request.query.get("fieldManager", "")
    if not manager and request.content_type != "application/apply-patch+yaml":
        manager = request.headers.get("user-agent", "unknown").split("/")[0] or "unknown"
    return WriteOptions(
        dry_run=dry_run == "All",
        field_manager=manager,
        field_validation=request.query.get("fieldValidation", "Warn"),
        force=request.flag("force"),
        subresource=target.subresource if target.subresource in ("status", "scale") else "",
    )


async def _write(
    cluster: Cluster, rt: ResourceType, target: Route, request: Request, user: UserInfo, send: Send
) -> None:
    opts = _write_options(request, target)
    namespace = target.namespace if rt.namespaced else ""
    objects = cluster.objects
    status, result = 200, None
    if target.verb == "create" and target.subresource:
        result = _create_subresource(cluster, rt, target, decode_object(request, _DECODERS))
        status = 201
    elif target.verb == "create":
        if target.name:
            raise MethodNotAllowed("POST is not allowed on a named object; use PUT or PATCH")
        result = objects.create(
            rt, decode_object(request, _DECODERS), namespace=namespace, opts=opts
        )
        status = 201
    elif target.subresource == "scale":
        obj = objects.get(rt, namespace, target.name)
        body = (
            decode_object(request, _DECODERS)
            if target.verb == "update"
            else _patched_scale(request, obj)
        )
        result = subresources.write_scale(objects, rt, obj, body, opts)
    elif target.verb == "update":
        result = objects.update(
            rt,
            decode_object(request, _DECODERS),
            namespace=namespace,
            name=target.name,
            opts=opts,
            subresource=_subresource(target),
        )
    else:
        patch_type = PATCH_TYPES.get(request.content_type)
        if patch_type is None or patch_type == "unsupported":
            from sandbox.errors import UnsupportedMediaType

            raise UnsupportedMediaType(
                f"the patch content type {request.content_type!r} is not supported; use one of "
                f"{', '.join(k for k, v in PATCH_TYPES.items() if v != 'unsupported')}"
            )
        result, created = objects.patch(
            rt,
            namespace=namespace,
            name=target.name,
            patch_type=patch_type,
            patch=request.json_body(),
            opts=opts,
            subresource=_subresource(target),
        )
        status = 201 if created else 200
    await respond(send, status, dumps(result), warnings=opts.warnings)


def _subresource(target: Route) -> str:
    return "" if target.subresource == "finalize" else target.subresource


def _patched_scale(request: Request, obj: Obj) -> Any:
    from sandbox.patches import apply_json_patch, apply_merge_patch

    scale = subresources.scale_of(obj)
    patch_type = PATCH_TYPES.get(request.content_type)
    if patch_type == "json":
        return apply_json_patch(scale, request.json_body())
    return apply_merge_patch(scale, request.json_body())


def _create_subresource(cluster: Cluster, rt: ResourceType, target: Route, body: Any) -> Any:
    namespace = target.namespace
    parent = cluster.objects.get(rt, namespace, target.name)
    if target.subresource == "eviction":
        return subresources.evict(cluster.lifecycle, rt, parent, body)
    if target.subresource == "binding":
        return subresources.bind(cluster.objects, rt, parent, body)
    if target.subresource == "token":
        return subresources.token_for(cluster.authn, cluster.objects, parent, body)
    raise not_found(f"{rt.plural}/{target.subresource}", rt.group, target.name)


# -- deletes ---------------------------------------------------------------------------------


async def _delete(
    cluster: Cluster, rt: ResourceType, target: Route, request: Request, send: Send
) -> None:
    dry_run = request.query.get("dryRun", "")
    if dry_run not in ("", "All"):
        raise BadRequest(f'unsupported dryRun value "{dry_run}": the only supported value is All')
    options = DeleteOptions.parse(request.json_body(), request.query, dry_run=dry_run == "All")
    namespace = target.namespace if rt.namespaced else ""
    if target.verb == "delete":
        result = cluster.lifecycle.delete(rt, namespace, target.name, options)
        await respond(send, 200, dumps(result))
        return
    query = listing.ListQuery.parse(rt, request.query, namespace=namespace or None)
    items, meta = listing.select(cluster.store, rt, query)
    deleted = [
        cluster.lifecycle.delete(
            rt, o["metadata"].get("namespace", ""), o["metadata"]["name"], options
        )
        for o in items
    ]
    await respond(send, 200, dumps(listing.envelope(rt, deleted, meta)))


# -- metrics.k8s.io --------------------------------------------------------------------------


async def _metrics(cluster: Cluster, rt: ResourceType, target: Route, send: Send) -> None:
    book = cluster.metrics
    if target.verb == "watch":
        raise MethodNotAllowed("metrics cannot be watched")
    if rt.kind == "PodMetrics":
        one = book.pod(target.namespace, target.name) if target.name else None
        many = book.pods(target.namespace or None)
    else:
        one = book.node(target.name) if target.name else None
        many = book.nodes()
    if target.name:
        if one is None:
            raise not_found(rt.plural, rt.group, target.name)
        await respond(send, 200, dumps(one))
        return
    body = {"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": {}, "items": many}
    await respond(send, 200, dumps(body))
