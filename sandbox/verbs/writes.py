"""create, update, patch, delete and deletecollection, and the write subresources."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from sandbox import listing, subresources
from sandbox.errors import BadRequest, MethodNotAllowed, UnsupportedMediaType, not_found
from sandbox.http import PATCH_TYPES, PROTOBUF, dumps, respond
from sandbox.lifecycle import DeleteOptions
from sandbox.objects import WriteOptions
from sandbox.patches import apply_json_patch, apply_merge_patch
from sandbox.protobuf import decode_object as decode_protobuf
from sandbox.store import Obj
from sandbox.verbs.exchange import Exchange

DECODERS: dict[str, Callable[[bytes], Any]] = {PROTOBUF: decode_protobuf}
_TRACKED_SUBRESOURCES = ("status", "scale")


async def write(ex: Exchange) -> None:
    opts = _write_options(ex)
    target, objects = ex.target, ex.cluster.objects
    status = 200
    result: Any
    if target.verb == "create" and target.subresource:
        result, status = _create_subresource(ex, ex.body(DECODERS)), 201
    elif target.verb == "create":
        if target.name:
            raise MethodNotAllowed("POST is not allowed on a named object; use PUT or PATCH")
        result = objects.create(ex.rt, ex.body(DECODERS), namespace=ex.namespace, opts=opts)
        status = 201
    elif target.subresource == "scale":
        obj = objects.get(ex.rt, ex.namespace, target.name)
        body = ex.body(DECODERS) if target.verb == "update" else _patched_scale(ex, obj)
        result = subresources.write_scale(objects, ex.rt, obj, body, opts)
    elif target.verb == "update":
        result = objects.update(
            ex.rt,
            ex.body(DECODERS),
            namespace=ex.namespace,
            name=target.name,
            opts=opts,
            subresource=_subresource(ex),
        )
    else:
        result, created = objects.patch(
            ex.rt,
            namespace=ex.namespace,
            name=target.name,
            patch_type=_patch_type(ex),
            patch=ex.request.json_body(),
            opts=opts,
            subresource=_subresource(ex),
        )
        status = 201 if created else 200
    await ex.cluster.store.group_commit()
    await respond(ex.send, status, dumps(result), warnings=opts.warnings)


def _dry_run(ex: Exchange) -> bool:
    value = ex.request.query.get("dryRun", "")
    if value not in ("", "All"):
        raise BadRequest(f'unsupported dryRun value "{value}": the only supported value is All')
    return value == "All"


def _write_options(ex: Exchange) -> WriteOptions:
    request, sub = ex.request, ex.target.subresource
    manager = request.query.get("fieldManager", "")
    if not manager and request.content_type != "application/apply-patch+yaml":
        # Kubernetes names an unnamed writer after its User-Agent's first word.
        manager = request.headers.get("user-agent", "unknown").split("/")[0] or "unknown"
    validation = request.query.get("fieldValidation", "Warn")
    return WriteOptions(
        dry_run=_dry_run(ex),
        field_manager=manager,
        field_validation=validation,
        force=request.flag("force"),
        subresource=sub if sub in _TRACKED_SUBRESOURCES else "",
        duplicates=_duplicates(ex) if validation not in ("", "Ignore") else [],
        user=ex.user,
    )


def _duplicates(ex: Exchange) -> list[str]:
    """The body's repeated keys, found by parsing it a second time: only asked for when the
    fieldValidation mode reports them. A JSON patch's are its operations' own keys."""
    request = ex.request
    json_patch = ex.target.verb == "patch" and PATCH_TYPES.get(request.content_type) == "json"
    return request.duplicate_fields(json_patch=json_patch)


def _patch_type(ex: Exchange) -> str:
    content_type = ex.request.content_type
    patch_type = PATCH_TYPES.get(content_type)
    if patch_type is None or patch_type == "unsupported":
        supported = ", ".join(k for k, v in PATCH_TYPES.items() if v != "unsupported")
        raise UnsupportedMediaType(
            f"the patch content type {content_type!r} is not supported; use one of {supported}"
        )
    return patch_type


def _subresource(ex: Exchange) -> str:
    """namespaces/finalize writes the namespace itself; status writes only status."""
    return "" if ex.target.subresource == "finalize" else ex.target.subresource


def _patched_scale(ex: Exchange, obj: Obj) -> Any:
    scale = subresources.scale_of(obj)
    if PATCH_TYPES.get(ex.request.content_type) == "json":
        return apply_json_patch(scale, ex.request.json_body())
    return apply_merge_patch(scale, ex.request.json_body())


def _create_subresource(ex: Exchange, body: Any) -> Any:
    rt, target, cluster = ex.rt, ex.target, ex.cluster
    parent = cluster.objects.get(rt, target.namespace, target.name)
    if target.subresource == "eviction":
        return subresources.evict(cluster.lifecycle, rt, parent, body)
    if target.subresource == "binding":
        return subresources.bind(cluster.objects, rt, parent, body)
    if target.subresource == "token":
        return subresources.token_for(cluster.authn, cluster.objects, parent, body)
    raise not_found(f"{rt.plural}/{target.subresource}", rt.group, target.name)


async def delete(ex: Exchange) -> None:
    request, rt, lifecycle = ex.request, ex.rt, ex.cluster.lifecycle
    options = DeleteOptions.parse(request.json_body(), request.query, dry_run=_dry_run(ex))
    options = dataclasses.replace(options, user=ex.user)
    if ex.target.verb == "delete":
        result = lifecycle.delete(rt, ex.namespace, ex.target.name, options)
        await ex.cluster.store.group_commit()
        await respond(ex.send, 200, dumps(result), warnings=options.warnings)
        return
    query = listing.ListQuery.parse(rt, request.query, namespace=ex.namespace or None)
    items, meta = listing.select(ex.cluster.store, rt, query)
    deleted = [
        lifecycle.delete(rt, o["metadata"].get("namespace", ""), o["metadata"]["name"], options)
        for o in items
    ]
    await ex.cluster.store.group_commit()
    await respond(
        ex.send, 200, dumps(listing.envelope(rt, deleted, meta)), warnings=options.warnings
    )
