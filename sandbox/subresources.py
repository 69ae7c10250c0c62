"""Subresources with their own semantics: scale, eviction, binding and token.

(`status` is handled by the object service; `log` streams from sandbox.logs.) Each function takes
the parent's resource type and names plus the request body, and returns the response object.
Eviction asks the PodDisruptionBudgets that select the pod, computing their budget from the pods
that exist now, so a drain is refused with 429 exactly when Kubernetes would refuse it.
"""

from __future__ import annotations

import math
from typing import Any

from sandbox import fieldtypes
from sandbox.auth import Authenticator
from sandbox.clock import format_time
from sandbox.errors import (
    BadRequest,
    Cause,
    Conflict,
    InternalError,
    TooManyRequests,
    invalid,
)
from sandbox.lifecycle import DeleteOptions, Lifecycle
from sandbox.objects import Objects, WriteOptions
from sandbox.registry import ResourceType
from sandbox.selectors import LabelSelector
from sandbox.store import Obj

SUCCESS_201 = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Success",
    "code": 201,
}
_PDB_KEY = ("policy", "poddisruptionbudgets")


# -- scale -----------------------------------------------------------------------------------


def scale_of(obj: Obj) -> dict[str, Any]:
    meta = obj["metadata"]
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    selector = spec.get("selector")
    scale_status: dict[str, Any] = {"replicas": status.get("replicas", 0)}
    if selector:
        scale_status["selector"] = str(LabelSelector.from_object(selector))
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: meta[k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in meta
        },
        "spec": {"replicas": spec.get("replicas", 0)},
        "status": scale_status,
    }


def write_scale(
    objects: Objects, rt: ResourceType, obj: Obj, scale: Any, opts: WriteOptions
) -> dict[str, Any]:
    if not isinstance(scale, dict):
        raise BadRequest("the body must be an autoscaling/v1 Scale object")
    scale = fieldtypes.decode_as("autoscaling", "v1", "Scale", scale)
    replicas = (scale.get("spec") or {}).get("replicas", 0)
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        raise invalid(
            "Scale",
            "autoscaling",
            obj["metadata"]["name"],
            [
                Cause(
                    "spec.replicas",
                    f"Invalid value: {replicas!r}: must be greater than or equal to 0",
                )
            ],
        )
    sent_rv = (scale.get("metadata") or {}).get("resourceVersion")
    if sent_rv and sent_rv != obj["metadata"]["resourceVersion"]:
        raise Conflict(
            f'Operation cannot be fulfilled on {rt.qualified} "{obj["metadata"]["name"]}": the '
            "object has been modified; please apply your changes to the latest version and try "
            "again"
        )
    body = {**obj, "spec": {**(obj.get("spec") or {}), "replicas": replicas}}
    new = objects.update(
        rt,
        body,
        namespace=obj["metadata"].get("namespace", ""),
        name=obj["metadata"]["name"],
        opts=opts,
    )
    return scale_of(new)


# -- eviction --------------------------------------------------------------------------------


def evict(lifecycle: Lifecycle, pods: ResourceType, pod: Obj, eviction: Any) -> dict[str, Any]:
    if not isinstance(eviction, dict):
        raise BadRequest("the body must be a policy/v1 Eviction object")
    options = DeleteOptions.parse(eviction.get("deleteOptions") or {}, {}, dry_run=False)
    phase = (pod.get("status") or {}).get("phase")
    if phase in (None, "Pending", "Succeeded", "Failed") or pod["metadata"].get(
        "deletionTimestamp"
    ):
        _delete(lifecycle, pods, pod, options)
        return SUCCESS_201
    budgets = _matching_budgets(lifecycle, pod)
    if len(budgets) > 1:
        raise InternalError(
            "This pod has more than one PodDisruptionBudget, which the eviction subresource "
            "does not support."
        )
    if budgets:
        _check_budget(lifecycle, budgets[0], pod)
    _delete(lifecycle, pods, pod, options)
    return SUCCESS_201


def _delete(lifecycle: Lifecycle, pods: ResourceType, pod: Obj, options: DeleteOptions) -> None:
    meta = pod["metadata"]
    lifecycle.delete(pods, meta["namespace"], meta["name"], options)


def _matching_budgets(lifecycle: Lifecycle, pod: Obj) -> list[Obj]:
    labels = pod["metadata"].get("labels") or {}
    return [
        pdb
        for pdb in lifecycle.store.list(_PDB_KEY, pod["metadata"]["namespace"])
        if LabelSelector.from_object((pdb.get("spec") or {}).get("selector")).matches(labels)
    ]


def budget_numbers(lifecycle: Lifecycle, pdb: Obj) -> tuple[int, int, int]:
    """(currentHealthy, desiredHealthy, expectedPods) for a budget, from the live pods."""
    spec = pdb.get("spec") or {}
    selector = LabelSelector.from_object(spec.get("selector"))
    selected = [
        p
        for p in lifecycle.store.list(("", "pods"), pdb["metadata"]["namespace"])
        if selector.matches(p["metadata"].get("labels") or {})
        and not p["metadata"].get("deletionTimestamp")
    ]
    healthy = sum(1 for p in selected if _ready(p))
    expected = len(selected)
    if "minAvailable" in spec:
        desired = _resolve(spec["minAvailable"], expected, round_up=True)
    elif "maxUnavailable" in spec:
        desired = max(expected - _resolve(spec["maxUnavailable"], expected, round_up=True), 0)
    else:
        desired = expected
    return healthy, desired, expected


def _check_budget(lifecycle: Lifecycle, pdb: Obj, pod: Obj) -> None:
    healthy, desired, _ = budget_numbers(lifecycle, pdb)
    allowed = healthy - desired if _ready(pod) else healthy - desired + 1
    if allowed < 1:
        name = pdb["metadata"]["name"]
        raise TooManyRequests(
            "Cannot evict pod as it would violate the pod's disruption budget.",
            causes=[
                Cause(
                    "",
                    f"The disruption budget {name} needs {desired} healthy pods and "
                    f"has {healthy} currently",
                    reason="DisruptionBudget",
                )
            ],
            retry_after=10,
        )


def _ready(pod: Obj) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _resolve(value: Any, total: int, *, round_up: bool) -> int:
    if isinstance(value, str) and value.endswith("%"):
        fraction = int(value[:-1]) * total / 100
        return math.ceil(fraction) if round_up else math.floor(fraction)
    return int(value)


# -- binding ---------------------------------------------------------------------------------


def bind(objects: Objects, pods: ResourceType, pod: Obj, binding: Any) -> dict[str, Any]:
    target = (binding or {}).get("target") if isinstance(binding, dict) else None
    if not isinstance(target, dict) or not target.get("name"):
        raise BadRequest("a Binding needs target.name (the node to bind the pod to)")
    meta = pod["metadata"]
    current = (pod.get("spec") or {}).get("nodeName")
    if current:
        raise Conflict(
            f'pod {meta["name"]} is already assigned to node "{current}"',
            name=meta["name"],
            kind="pods",
        )
    status = dict(pod.get("status") or {})
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
    conditions.append(
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": objects.clock.timestamp()}
    )
    status["conditions"] = conditions
    bound = {**pod, "spec": {**pod["spec"], "nodeName": target["name"]}, "status": status}
    objects.write(pods, bound, pod, manager="sandbox-binding")
    return SUCCESS_201


# -- token -----------------------------------------------------------------------------------


def token_for(authn: Authenticator, objects: Objects, sa: Obj, request: Any) -> dict[str, Any]:
    spec = (request or {}).get("spec") or {} if isinstance(request, dict) else {}
    audiences = list(spec.get("audiences") or ["https://kubernetes.default.svc.cluster.local"])
    seconds = int(spec.get("expirationSeconds") or 3600)
    meta = sa["metadata"]
    token, expiry = authn.issue_token(
        namespace=meta["namespace"],
        name=meta["name"],
        uid=meta["uid"],
        audiences=audiences,
        expiration_seconds=seconds,
        now=objects.clock.now(),
    )
    return {
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {
            "name": meta["name"],
            "namespace": meta["namespace"],
            "creationTimestamp": None,
        },
        "spec": {
            "audiences": audiences,
            "expirationSeconds": seconds,
            "boundObjectRef": spec.get("boundObjectRef"),
        },
        "status": {"token": token, "expirationTimestamp": format_time(expiry)},
    }
