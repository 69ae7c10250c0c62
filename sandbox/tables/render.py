"""Turn a list of objects into the `meta.k8s.io/v1` Table that `kubectl get` asks for.

The printer is chosen by (group, kind): the built-in printers of each family module, the CRD's
printer columns for custom resources, and `NAME AGE` for anything else. Every column is rendered,
wide ones included, because kubectl filters by priority itself and adds NAMESPACE for `-A` from
each row's object metadata.

The Table returned shares nested values (metadata, and whole objects for `includeObject=Object`)
with the input objects rather than copying them: it is meant to be serialized and dropped, not
edited. Inputs are never modified. This module knows nothing of HTTP or storage.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from types import MappingProxyType
from typing import Any, Literal

from sandbox.errors import BadRequest
from sandbox.registry import ResourceType
from sandbox.tables import (
    admission,
    autoscaling,
    cluster,
    events,
    networking,
    pods,
    rbac,
    storage,
    workloads,
)
from sandbox.tables.custom import custom_printer
from sandbox.tables.durations import now_epoch
from sandbox.tables.printer import NAME_AGE, Printer

IncludeObject = Literal["None", "Object", "Metadata"]
_INCLUDE_OBJECT = ("None", "Object", "Metadata")

BUILTIN_PRINTERS: Mapping[tuple[str, str], Printer] = MappingProxyType(
    {
        key: printer
        for family in (
            pods,
            workloads,
            autoscaling,
            networking,
            storage,
            cluster,
            events,
            rbac,
            admission,
        )
        for key, printer in family.PRINTERS.items()
    }
)


def printer_for(rt: ResourceType) -> Printer:
    if rt.custom:
        return custom_printer(rt.printer_columns)
    return BUILTIN_PRINTERS.get((rt.group, rt.kind), NAME_AGE)


def render_table(
    rt: ResourceType,
    objects: list[dict[str, Any]],
    *,
    include_object: str = "Metadata",
    now: datetime,
    list_meta: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The Table for `objects` of type `rt`; `include_object` is the request's `includeObject`."""
    if include_object not in _INCLUDE_OBJECT:
        raise BadRequest(f'unrecognized includeObject value: "{include_object}"')
    printer = printer_for(rt)
    moment = now_epoch(now)
    cells, conditions = printer.cells, printer.conditions
    rows = []
    for obj in objects:
        row: dict[str, Any] = {"cells": cells(obj, moment)}
        if conditions is not None and (found := conditions(obj)) is not None:
            row["conditions"] = [dict(c) for c in found]
        row["object"] = _row_object(obj, include_object)
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": dict(list_meta) if list_meta else {},
        "columnDefinitions": [column.definition() for column in printer.columns],
        "rows": rows,
    }


def _row_object(obj: dict[str, Any], include_object: str) -> dict[str, Any] | None:
    if include_object == "Metadata":
        return {
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": obj.get("metadata") or {},
        }
    return obj if include_object == "Object" else None
