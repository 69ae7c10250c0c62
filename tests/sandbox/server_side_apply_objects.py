"""Shared builders for the server-side apply tests (tests/sandbox/test_server_side_apply_*.py).

What may live here: the Kubernetes schemas the tests apply with, fixed timestamps, a Deployment
builder, thin `apply`/`update` wrappers over `sandbox.patches` with the tests' defaults, and
readers of the result (owners by manager, the object without managedFields, its containers).
Tests, and builders only one test module uses, belong in the modules.
"""

from __future__ import annotations

import copy
from typing import Any

from sandbox.patches import record_update, server_side_apply
from sandbox.patches.managed import path_string, read_managers
from sandbox.schemas import SchemaNode, for_kind


def schema(group: str, kind: str) -> SchemaNode:
    found = for_kind(group, "v1", kind)
    assert found is not None
    return found


DEPLOYMENT = schema("apps", "Deployment")
SERVICE = schema("", "Service")
CONFIGMAP = schema("", "ConfigMap")
T0, T1, T2, T3 = (f"2026-12-0{day}T10:00:00Z" for day in range(1, 5))


def deployment(
    *,
    replicas: int | None = 2,
    labels: dict[str, str] | None = None,
    containers: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": containers or [{"name": "web", "image": "nginx:1"}]},
        },
    }
    if replicas is not None:
        spec = {"replicas": replicas, **spec}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": labels or {"app": "web"}},
        "spec": spec,
    }


def apply(
    live: dict[str, Any] | None,
    config: dict[str, Any],
    *,
    manager: str = "kubectl",
    force: bool = False,
    now: str = T1,
    schema: SchemaNode | None = DEPLOYMENT,
) -> dict[str, Any]:
    return server_side_apply(live, config, manager=manager, force=force, schema=schema, now=now)


def update(
    old: dict[str, Any] | None, new: dict[str, Any], *, manager: str, now: str = T2
) -> dict[str, Any]:
    return record_update(old, new, manager=manager, operation="Update", now=now, schema=DEPLOYMENT)


def scaled(obj: dict[str, Any], replicas: int) -> dict[str, Any]:
    result = copy.deepcopy(obj)
    result["spec"]["replicas"] = replicas
    return result


def owners(obj: dict[str, Any]) -> dict[str, set[str]]:
    """manager -> owned fields as Kubernetes prints them."""
    return {
        entry.manager: {path_string(path) for path in entry.fields} for entry in read_managers(obj)
    }


def without_managed_fields(obj: dict[str, Any]) -> dict[str, Any]:
    result = copy.deepcopy(obj)
    result["metadata"].pop("managedFields", None)
    return result


def containers_of(obj: dict[str, Any]) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = obj["spec"]["template"]["spec"]["containers"]
    return result
