"""The sandbox's own HTTP endpoints, beside the Kubernetes API: `/kubecrew/v1/...`.

    GET    /kubecrew/v1/faults        the faults, active and scheduled (a FaultList)
    POST   /kubecrew/v1/faults        add one (body: a fault spec as JSON) -> 201 and the fault
    DELETE /kubecrew/v1/faults/{id}   clear one -> the cleared fault
    DELETE /kubecrew/v1/faults        clear all -> the cleared faults
    GET    /kubecrew/v1/clock         the sandbox clock: now, rate, seed
    GET    /kubecrew/v1/version       the control plane's Kubernetes version (`/version`'s)
    PUT    /kubecrew/v1/version       move it (body: {"gitVersion": "v1.38.0"}), as an upgrade does
    GET    /kubecrew/v1/control       the control plane's work so far: reconciles, CPU seconds
    GET    /kubecrew/v1/metrics       Prometheus text exposition of the simulated cluster

The app has authenticated the caller; this module authorizes each request with RBAC as a
non-resource request (the path, and the lower-cased HTTP method as verb, as kube-apiserver does),
so the admin (system:masters) may do everything and a ServiceAccount needs a ClusterRole rule with
`nonResourceURLs: ["/kubecrew/*"]`. Failures are Kubernetes `Status` bodies, like the API's. These
paths are not part of discovery or OpenAPI: no Kubernetes client should stumble on them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from sandbox.auth import UserInfo
from sandbox.cluster import Cluster
from sandbox.errors import BadRequest, MethodNotAllowed, NotFound
from sandbox.faults import Fault, FaultSpecError, UnknownFault
from sandbox.http import Request, Send, dumps, respond
from sandbox.rbac import Attributes, forbidden
from sandbox.version import parse_version, version_info

PREFIX = "/kubecrew/"
BASE = "/kubecrew/v1"
API_VERSION = "sandbox.kubecrew.io/v1alpha1"
PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8"


def is_admin_path(path: str) -> bool:
    return path.startswith(PREFIX) or path == PREFIX.rstrip("/")


async def serve(cluster: Cluster, request: Request, user: UserInfo, send: Send) -> None:
    verb = request.method.lower()
    attrs = Attributes(user=user, verb=verb, path=request.path)
    decision = cluster.authz.authorize(attrs)
    if not decision.allowed:
        raise forbidden(attrs, reason=decision.reason)
    parts = request.path.removeprefix(BASE).strip("/").split("/")
    handler = _ROUTES.get((request.method, parts[0], len(parts)))
    if handler is None:
        if any(key[1:] == (parts[0], len(parts)) for key in _ROUTES):
            raise MethodNotAllowed(f"method {request.method} is not supported on {request.path}")
        raise NotFound("the server could not find the requested resource")
    status, body, content_type = handler(cluster, request, parts)
    payload = body if isinstance(body, bytes) else dumps(body)
    await respond(send, status, payload, content_type=content_type)


Answer = tuple[int, Any, str]
JSON = "application/json"


def _list(cluster: Cluster, _request: Request, _parts: list[str]) -> Answer:
    return 200, _fault_list(cluster.faults.list()), JSON


def _add(cluster: Cluster, request: Request, _parts: list[str]) -> Answer:
    spec = request.json_body()
    if spec is None:
        raise BadRequest('the request body must be a fault spec, e.g. {"kind": "slow", ...}')
    try:
        fault = cluster.faults.add(spec)
    except FaultSpecError as exc:
        raise BadRequest(str(exc)) from exc
    return 201, _fault(fault), JSON


def _clear(cluster: Cluster, _request: Request, parts: list[str]) -> Answer:
    try:
        return 200, _fault(cluster.faults.clear(parts[1])), JSON
    except UnknownFault as exc:
        raise NotFound(str(exc), name=parts[1], kind="faults") from exc


def _clear_all(cluster: Cluster, _request: Request, _parts: list[str]) -> Answer:
    return 200, _fault_list(cluster.faults.clear_all()), JSON


def _clock(cluster: Cluster, _request: Request, _parts: list[str]) -> Answer:
    clock = cluster.clock
    body = {
        "kind": "Clock",
        "apiVersion": API_VERSION,
        "now": clock.micro_timestamp(),
        "rate": clock.rate,
        "seed": cluster.world.seed,
        "elapsedSeconds": round(clock.seconds() - cluster.faults.started, 3),
    }
    return 200, body, JSON


def _version(cluster: Cluster, _request: Request, _parts: list[str]) -> Answer:
    body = {
        "kind": "ControlPlaneVersion",
        "apiVersion": API_VERSION,
        **version_info(cluster.world.control_plane_version),
    }
    return 200, body, JSON


def _set_version(cluster: Cluster, request: Request, parts: list[str]) -> Answer:
    body = request.json_body()
    wanted = body.get("gitVersion") if isinstance(body, dict) else None
    try:
        cluster.world.control_plane_version = parse_version(wanted)
    except ValueError as exc:
        raise BadRequest(f'the body must be {{"gitVersion": "v1.38.0"}}: gitVersion {exc}') from exc
    return _version(cluster, request, parts)


def _control(cluster: Cluster, _request: Request, _parts: list[str]) -> Answer:
    manager = cluster.control
    body = {
        "kind": "ControlPlane",
        "apiVersion": API_VERSION,
        "controllers": sorted({c.name for c in manager.controllers}),
        "reconciles": manager.reconciles,
        "cpuSeconds": round(manager.cpu_seconds, 3),
        "pending": manager.pending(),
    }
    return 200, body, JSON


def _metrics(cluster: Cluster, _request: Request, _parts: list[str]) -> Answer:
    try:  # written in parallel with this module; answer 404 rather than fail to start
        exposition = importlib.import_module("sandbox.exposition")
    except ModuleNotFoundError as exc:
        raise NotFound("the Prometheus exposition is not part of this sandbox build") from exc
    text: str = exposition.render(cluster)
    return 200, text.encode(), PROMETHEUS_TEXT


def _fault(fault: Fault) -> dict[str, Any]:
    # A fault's own `kind` (node-heartbeat, ...) is what callers branch on, so a single fault
    # carries no Kubernetes-style kind/apiVersion envelope; the list does.
    return fault.to_dict()


def _fault_list(faults: list[Fault]) -> dict[str, Any]:
    return {"kind": "FaultList", "apiVersion": API_VERSION, "items": [_fault(f) for f in faults]}


_ROUTES: dict[tuple[str, str, int], Callable[[Cluster, Request, list[str]], Answer]] = {
    ("GET", "faults", 1): _list,
    ("POST", "faults", 1): _add,
    ("DELETE", "faults", 1): _clear_all,
    ("DELETE", "faults", 2): _clear,
    ("GET", "clock", 1): _clock,
    ("GET", "version", 1): _version,
    ("PUT", "version", 1): _set_version,
    ("GET", "control", 1): _control,
    ("GET", "metrics", 1): _metrics,
}
