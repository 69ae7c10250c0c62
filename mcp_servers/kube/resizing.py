"""Container requests and limits of a workload, set as `kubectl set resources` does.

`set_resources` changes one container's CPU and memory requests (and limits, when given) in a
Deployment, StatefulSet or DaemonSet by a strategic merge patch of its pod template: the other
resources of the container, and every other container, stay as they are; the pods are replaced
by the workload's rollout. `resize` is the one place the call is read from its arguments and the
live object, for the write and for the gate alike: the patch body, and the policy store's
`ResourceChange` (from = the live values, to = the asked ones), so a proposal approved for some
values carries exactly those values and no others.

Quantities are checked here with the policy documents' parser (`500m`, `0.5`, `256Mi`), so a
typo is refused with what was expected instead of reaching the API server.
"""

from __future__ import annotations

from typing import Any

from core.connection import Json
from core.errors import InvalidArgument, NotFound
from core.policy.actions import QuantityChange, Resource, ResourceChange
from core.policy.documents.blueprint import quantity
from mcp_servers.common import arguments
from mcp_servers.kube.writes import CONTENT_TYPES, MANAGER, Writes, only

RESIZABLE = {"Deployment", "StatefulSet", "DaemonSet"}
_FIELDS = ("containers", "initContainers")


def asked(
    cpu: str = "", memory: str = "", limit_cpu: str = "", limit_memory: str = ""
) -> tuple[dict[Resource, str], dict[Resource, str]]:
    """The requests and limits a call asks for, checked as quantities; empty ones left out."""
    requests: dict[Resource, str] = {}
    limits: dict[Resource, str] = {}
    given: tuple[tuple[dict[Resource, str], Resource, str, str], ...] = (
        (requests, "cpu", cpu, "cpu"),
        (requests, "memory", memory, "memory"),
        (limits, "cpu", limit_cpu, "limit_cpu"),
        (limits, "memory", limit_memory, "limit_memory"),
    )
    for into, name, value, argument in given:
        if not value:
            continue
        try:
            if quantity(value) < 0:
                raise ValueError(f"{value!r} is negative")
        except ValueError as exc:
            unit = "such as 100m or 0.5 cores" if name == "cpu" else "such as 128Mi or 1Gi"
            raise InvalidArgument(f"{argument}: {exc}; give a quantity {unit}") from exc
        into[name] = value
    if not requests and not limits:
        raise InvalidArgument(
            "give at least one of cpu, memory (requests), limit_cpu or limit_memory"
        )
    return requests, limits


def resize(
    live: Json | None,
    what: str,
    container: str,
    requests: dict[Resource, str],
    limits: dict[Resource, str],
) -> tuple[Json, ResourceChange]:
    """The strategic merge patch for the call, and the change it makes to `container`."""
    arguments.name(container, argument="container")
    if live is None:
        raise NotFound(f"{what} was not found")
    spec = ((live.get("spec") or {}).get("template") or {}).get("spec") or {}
    found = next(
        ((f, c) for f in _FIELDS for c in spec.get(f) or [] if c.get("name") == container),
        None,
    )
    if found is None:
        names = [c.get("name") for f in _FIELDS for c in spec.get(f) or []]
        raise NotFound(f"{what} has no container {container!r}; it has {names}")
    field, current = found
    now = current.get("resources") or {}
    resources: Json = {}
    if requests:
        resources["requests"] = dict(requests)
    if limits:
        resources["limits"] = dict(limits)
    body: Json = {
        "spec": {"template": {"spec": {field: [{"name": container, "resources": resources}]}}}
    }
    change = ResourceChange(
        container=container,
        requests=_changes(now.get("requests") or {}, requests),
        limits=_changes(now.get("limits") or {}, limits),
    )
    return body, change


def _changes(current: dict[str, Any], to: dict[Resource, str]) -> dict[Resource, QuantityChange]:
    return {
        name: QuantityChange(from_=str(current[name]) if name in current else None, to=value)
        for name, value in to.items()
    }


def set_resources(
    writes: Writes,
    kind: str,
    name: str,
    container: str,
    *,
    cpu: str = "",
    memory: str = "",
    limit_cpu: str = "",
    limit_memory: str = "",
    namespace: str | None = None,
    dry_run: bool = False,
    context: str | None = None,
) -> Json:
    requests, limits = asked(cpu, memory, limit_cpu, limit_memory)
    api = writes.api(context)
    target = only(writes.target(api, kind, name, namespace), RESIZABLE, "set resources of")
    before = writes.current(api, target)
    body, _ = resize(before, target.what, container, requests, limits)
    return writes.change(
        api, target, "PATCH", body=body, content_type=CONTENT_TYPES["strategic"],
        query={"fieldManager": MANAGER}, dry_run=dry_run, before=before,
    )  # fmt: skip
