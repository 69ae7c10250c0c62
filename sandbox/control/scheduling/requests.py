"""What a pod asks of a node: its effective resource requests, worked out as Kubernetes does.

Two sums, because kube-scheduler keeps two: the requests the fit filter checks against
`status.allocatable` (init containers and sidecars counted the Kubernetes way, pod overhead,
one pod slot), and the requests scoring counts, where a container asking for nothing still
weighs 100m CPU and 200Mi memory so best-effort pods spread. `Ask` also carries the node
features the pod requires (NodeDeclaredFeatures' PreFilter, sandbox/kubelet/features.py).
This module knows pod specs and quantities only: nothing of nodes, the store or the cache.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sandbox.kubelet.features import required_by
from sandbox.quantity import millicores, units
from sandbox.store import Obj


@dataclass(frozen=True)
class Ask:
    """What a pod asks of a node, worked out once per decision rather than once per node."""

    spec: Mapping[str, Any]
    tolerations: list[Mapping[str, Any]]
    needs: tuple[tuple[str, int], ...]  # non-zero requests, in kube-scheduler's check order
    selective: bool  # has a nodeSelector or required node affinity
    prefers: bool  # has preferred node affinity
    features: tuple[str, ...]  # node declared features it requires

    @classmethod
    def of(cls, pod: Obj) -> Ask:
        spec = pod.get("spec") or {}
        requests = pod_requests(spec)
        node_affinity = (spec.get("affinity") or {}).get("nodeAffinity") or {}
        return cls(
            spec=spec,
            tolerations=list(spec.get("tolerations") or ()),
            needs=tuple(
                (r, requests[r]) for r in sorted(requests, key=_resource_order) if requests[r] > 0
            ),
            selective=bool(
                spec.get("nodeSelector")
                or node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
            ),
            prefers=bool(node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution")),
            features=required_by(spec),
        )


def pod_requests(spec: Mapping[str, Any]) -> Counter[str]:
    """Effective requests as Kubernetes computes them: the larger of the regular containers
    (plus sidecars) and the peak of the init containers, plus the pod overhead, plus one pod."""
    total: Counter[str] = Counter()
    for container in spec.get("containers") or ():
        total.update(_container_requests(container))
    sidecars: Counter[str] = Counter()
    peak: Counter[str] = Counter()
    for container in spec.get("initContainers") or ():
        requests = _container_requests(container)
        if container.get("restartPolicy") == "Always":
            sidecars.update(requests)
            running = sidecars
        else:
            running = sidecars + requests
        for resource, amount in running.items():
            peak[resource] = max(peak[resource], amount)
    total.update(sidecars)
    for resource, amount in peak.items():
        total[resource] = max(total[resource], amount)
    total.update(_amounts(spec.get("overhead") or {}))
    total["pods"] = 1
    return total


def scoring_requests(spec: Mapping[str, Any]) -> Counter[str]:
    """CPU and memory as scoring counts them: a container asking for none counts 100m/200Mi,
    so best-effort pods still spread."""
    total: Counter[str] = Counter()
    for container in spec.get("containers") or ():
        requests = _container_requests(container)
        total["cpu"] += requests["cpu"] or 100
        total["memory"] += requests["memory"] or 200 * 2**20
    return total


def _container_requests(container: Mapping[str, Any]) -> Counter[str]:
    resources = container.get("resources") or {}
    # A limit without a request is the request too (the API server defaults it so).
    return _amounts({**(resources.get("limits") or {}), **(resources.get("requests") or {})})


def _amounts(quantities: Mapping[str, Any]) -> Counter[str]:
    return Counter({k: (millicores(v) if k == "cpu" else units(v)) for k, v in quantities.items()})


def _resource_order(resource: str) -> tuple[int, str]:
    order = {"pods": 0, "cpu": 1, "memory": 2, "ephemeral-storage": 3}
    return (order.get(resource, 4), resource)
