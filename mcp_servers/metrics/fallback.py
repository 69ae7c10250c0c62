"""Answers without Prometheus: what the cluster's metrics.k8s.io API can tell, and what it cannot.

metrics.k8s.io (metrics-server, or the sandbox's kubelet) knows current CPU and memory use per
container and per node, nothing else. So without Prometheus: utilization per workload is a single
current sample (average and peak are that sample; the window is ignored), node pressure comes from
Node conditions and current use against allocatable, and the request-based answers (golden
signals, SLO burn rate) are unavailable: `unavailable(...)` says so and what would enable them.

The cluster is reached only through `core.connection.Api` (the kubeconfig path a
real cluster uses); requests and limits come from the pods' specs, owners from ownerReferences.
"""

from __future__ import annotations

from typing import Any

from core.connection import Api
from core.errors import Unavailable
from core.quantity import amount
from mcp_servers.common import arguments
from mcp_servers.metrics.utilization import PRESSURES, NodePressure, WorkloadUsage

METRICS = "/apis/metrics.k8s.io/v1beta1"
WITHOUT_PROMETHEUS = (
    "no Prometheus is configured, so {what} is unavailable (metrics.k8s.io has only current CPU "
    "and memory use); start the metrics server with --prometheus-url to get it"
)


def unavailable(what: str) -> Unavailable:
    return Unavailable(WITHOUT_PROMETHEUS.format(what=what))


def workload_usage(api: Api, *, namespace: str) -> list[WorkloadUsage]:
    namespace = arguments.namespace(namespace)
    measured = api.get(f"{METRICS}/namespaces/{namespace}/pods", what="pod metrics")
    pods = api.get(f"/api/v1/namespaces/{namespace}/pods", what=f"pods in {namespace}")
    replicasets = api.get(
        f"/apis/apps/v1/namespaces/{namespace}/replicasets", what=f"replicasets in {namespace}"
    )
    rs_owner = {
        rs["metadata"]["name"]: controller
        for rs in replicasets.get("items") or ()
        if (controller := _controller(rs)) is not None
    }
    specs = {pod["metadata"]["name"]: pod for pod in pods.get("items") or ()}
    rows: dict[tuple[str, str], WorkloadUsage] = {}
    for item in measured.get("items") or ():
        name = item["metadata"]["name"]
        pod = specs.get(name)
        if pod is None:
            continue
        owner = _controller(pod) or ("Pod", name)
        if owner[0] == "ReplicaSet" and owner[1] in rs_owner:
            owner = rs_owner[owner[1]]
        row = rows.setdefault(owner, WorkloadUsage(*owner))
        row.pods += 1
        in_pod = 0.0
        for container in item.get("containers") or ():
            usage = container.get("usage") or {}
            in_pod += amount(usage.get("cpu", "0"))
            memory = amount(usage.get("memory", "0"))
            row.memory_used += memory
            row.memory_peak += memory
        row.cpu_used += in_pod
        row.cpu_peak = max(row.cpu_peak, in_pod)  # one sample: the busiest pod now
        for container in (pod.get("spec") or {}).get("containers") or ():
            resources = container.get("resources") or {}
            requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
            row.cpu_requests += amount(requests.get("cpu", "0"))
            row.memory_requests += amount(requests.get("memory", "0"))
            row.cpu_limits += amount(limits.get("cpu", "0"))
            row.memory_limits += amount(limits.get("memory", "0"))
    return [rows[key].finish() for key in sorted(rows)]


def node_pressure(api: Api) -> list[NodePressure]:
    nodes = api.get("/api/v1/nodes", what="nodes")
    usage = {
        item["metadata"]["name"]: item.get("usage") or {}
        for item in api.get(f"{METRICS}/nodes", what="node metrics").get("items") or ()
    }
    rows = []
    for node in nodes.get("items") or ():
        name = node["metadata"]["name"]
        status = node.get("status") or {}
        conditions = {c["type"]: c.get("status") for c in status.get("conditions") or ()}
        allocatable = status.get("allocatable") or {}
        used = usage.get(name, {})
        rows.append(
            NodePressure(
                node=name,
                pressures=[p for p in PRESSURES if conditions.get(p) == "True"],
                ready=conditions.get("Ready") == "True" if "Ready" in conditions else None,
                cpu_used_of_allocatable=_fraction(used.get("cpu"), allocatable.get("cpu")),
                memory_used_of_allocatable=_fraction(used.get("memory"), allocatable.get("memory")),
            )
        )
    return sorted(rows, key=lambda row: row.node)


def _controller(obj: dict[str, Any]) -> tuple[str, str] | None:
    for ref in obj["metadata"].get("ownerReferences") or ():
        if ref.get("controller"):
            return str(ref["kind"]), str(ref["name"])
    return None


def _fraction(used: str | None, allocatable: str | None) -> float | None:
    if used is None or allocatable is None or amount(allocatable) <= 0:
        return None
    return amount(used) / amount(allocatable)
