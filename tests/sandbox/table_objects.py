"""Shared builders for the server-side Table tests (tests/sandbox/test_tables_*.py).

What may live here: the fixed clock the tests render at, object metadata and pod/container-status
builders, and small readers of a rendered Table (a row by column name, column names by priority).
No tests and no expectations live here; a builder only one test module uses belongs in that module.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sandbox.registry import BUILTINS
from sandbox.tables import render_table

NOW = datetime(2026, 12, 2, 12, 0, 0, tzinfo=UTC)
TYPES = {(rt.group, rt.kind): rt for rt in BUILTINS}
Json = dict[str, Any]


def ago(seconds: float) -> str:
    return (NOW - timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def meta(name: str, *, age: float = 3600, namespace: str | None = "default", **extra: Any) -> Json:
    found: dict[str, Any] = {"name": name, "creationTimestamp": ago(age), "uid": f"uid-{name}"}
    if namespace:
        found["namespace"] = namespace
    return found | extra


def render(group: str, kind: str, *objects: dict[str, Any], **options: Any) -> dict[str, Any]:
    return render_table(TYPES[(group, kind)], list(objects), now=NOW, **options)


def row_by_name(table: dict[str, Any]) -> dict[str, Any]:
    """The first row as {column name: cell}."""
    names = [c["name"] for c in table["columnDefinitions"]]
    cells = table["rows"][0]["cells"]
    assert len(cells) == len(names)
    return dict(zip(names, cells, strict=True))


def column_names(table: dict[str, Any], *, priority: int) -> list[str]:
    return [c["name"] for c in table["columnDefinitions"] if c["priority"] == priority]


def pod(
    *,
    phase: str = "Running",
    containers: list[dict[str, Any]] | None = None,
    init: list[dict[str, Any]] | None = None,
    init_specs: list[dict[str, Any]] | None = None,
    conditions: list[dict[str, Any]] | None = None,
    **status: Any,
) -> dict[str, Any]:
    statuses = containers if containers is not None else [running("app")]
    spec: dict[str, Any] = {"containers": [{"name": c["name"], "image": "app:1"} for c in statuses]}
    if init is not None or init_specs is not None:
        spec["initContainers"] = init_specs or [
            {"name": c["name"], "image": "init:1"} for c in init or []
        ]
    body: dict[str, Any] = {"phase": phase, "containerStatuses": statuses, **status}
    if init is not None:
        body["initContainerStatuses"] = init
    if conditions is not None:
        body["conditions"] = conditions
    return {"metadata": meta("web-1"), "spec": spec, "status": body}


def running(name: str, *, ready: bool = True, restarts: int = 0) -> dict[str, Any]:
    return {
        "name": name,
        "ready": ready,
        "started": True,
        "restartCount": restarts,
        "state": {"running": {"startedAt": ago(100)}},
    }


def waiting(name: str, reason: str, *, restarts: int = 0) -> dict[str, Any]:
    return {
        "name": name,
        "ready": False,
        "restartCount": restarts,
        "state": {"waiting": {"reason": reason}},
    }


def terminated(name: str, *, exit_code: int, reason: str = "", **extra: Any) -> dict[str, Any]:
    state = {"exitCode": exit_code, **({"reason": reason} if reason else {}), **extra}
    return {"name": name, "ready": False, "restartCount": 0, "state": {"terminated": state}}


READY = [{"type": "Initialized", "status": "True"}, {"type": "Ready", "status": "True"}]


def check_columns_and_cells(
    group: str, kind: str, obj: Json, normal: list[str], wide: list[str], sample: dict[str, Any]
) -> None:
    """The kind's normal and wide columns, and the sample cells of `obj`'s row."""
    table = render(group, kind, obj)
    assert column_names(table, priority=0) == normal
    assert column_names(table, priority=1) == wide
    row = row_by_name(table)
    assert row["Name"] == sample.get("Name", obj["metadata"]["name"])
    assert {key: row[key] for key in sample} == sample
