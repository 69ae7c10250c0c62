"""How much of what they asked for the workloads use, and how pressed the nodes are.

Per workload of a namespace, over a window: average CPU (cores, from cAdvisor's
`container_cpu_usage_seconds_total`), average and peak memory working set (bytes), against the sum
of the containers' requests and limits (kube-state-metrics' `kube_pod_container_resource_*`).
Pods are grouped by their controller: `kube_pod_owner`, and a ReplicaSet's own owner
(`kube_replicaset_owner`) so a Deployment's pods count as the Deployment's. This is the data for
right-sizing and for cost; the verdict is the caller's.

Per node: the pressure conditions that hold (`kube_node_status_condition`), CPU and memory use and
requests as fractions of allocatable.

PromQL is built only from validated names (`promql.matchers`); Prometheus is reached only through
`Prometheus.vector`.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

from mcp_servers.metrics import promql
from mcp_servers.metrics.prometheus import Prometheus, Sample

PRESSURES = ("MemoryPressure", "DiskPressure", "PIDPressure", "NetworkUnavailable")
CONTAINERS = 'container!="",container!="POD"'
PEAK_SPAN = 120  # seconds a CPU peak is a rate over, at most: two scrapes at a 60 s interval


@dataclass
class WorkloadUsage:
    """One workload's use against its declared resources (CPU in cores, memory in bytes);
    the sums run over its pods seen in the window."""

    kind: str
    name: str
    pods: int = 0
    cpu_used: float = 0.0  # the mean over the window, summed over its pods
    cpu_peak: float = 0.0  # the most one pod used at any moment of the window
    cpu_requests: float = 0.0
    cpu_limits: float = 0.0
    memory_used: float = 0.0
    memory_peak: float = 0.0
    memory_requests: float = 0.0
    memory_limits: float = 0.0
    cpu_of_requests: float | None = None  # used / requests (None: no requests set)
    memory_peak_of_requests: float | None = None
    memory_peak_of_limits: float | None = None

    def finish(self) -> WorkloadUsage:
        self.cpu_of_requests = _ratio(self.cpu_used, self.cpu_requests)
        self.memory_peak_of_requests = _ratio(self.memory_peak, self.memory_requests)
        self.memory_peak_of_limits = _ratio(self.memory_peak, self.memory_limits)
        return self

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class NodePressure:
    node: str
    pressures: list[str] = field(default_factory=list)  # conditions that are True now
    ready: bool | None = None
    cpu_used_of_allocatable: float | None = None
    memory_used_of_allocatable: float | None = None
    cpu_requested_of_allocatable: float | None = None
    memory_requested_of_allocatable: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def workload_usage(prom: Prometheus, *, namespace: str, window: str = "1h") -> list[WorkloadUsage]:
    """Every workload of the namespace with pods seen in the window, sorted by kind and name."""
    where = promql.matchers(namespace=namespace)
    window = promql.window(window)
    owners = _owners(prom, where)
    rows: dict[tuple[str, str], WorkloadUsage] = {}
    seen: dict[tuple[str, str], set[str]] = defaultdict(set)

    def add(samples: list[Sample], attribute: str, *, most: bool = False) -> None:
        """Each pod's value into its workload's row: summed, or the largest with `most`."""
        for sample in samples:
            pod = sample.labels.get("pod", "")
            if not pod or sample.value is None:
                continue
            kind, name = owners.get(pod, ("Pod", pod))
            row = rows.setdefault((kind, name), WorkloadUsage(kind, name))
            seen[(kind, name)].add(pod)
            was = getattr(row, attribute)
            setattr(row, attribute, max(was, sample.value) if most else was + sample.value)

    usage = f"{where},{CONTAINERS}"
    add(
        prom.vector(f"sum by (pod) (rate(container_cpu_usage_seconds_total{{{usage}}}[{window}]))"),
        "cpu_used",
    )
    add(prom.vector(_cpu_peak(usage, window)), "cpu_peak", most=True)
    memory = f"container_memory_working_set_bytes{{{usage}}}[{window}]"
    add(prom.vector(f"sum by (pod) (avg_over_time({memory}))"), "memory_used")
    add(prom.vector(f"sum by (pod) (max_over_time({memory}))"), "memory_peak")
    for family, prefix in (("requests", "requests"), ("limits", "limits")):
        for resource in ("cpu", "memory"):
            add(
                prom.vector(
                    f"sum by (pod) (kube_pod_container_resource_{family}"
                    f'{{{where},resource="{resource}"}})'
                ),
                f"{resource}_{prefix}",
            )
    for key, row in rows.items():
        row.pods = len(seen[key])
        row.finish()
    return [rows[key] for key in sorted(rows)]


def _cpu_peak(usage: str, window: str) -> str:
    """PromQL for the most CPU (cores) each pod used at any moment of the window: its rate over
    short spans (PEAK_SPAN seconds, half the window at most), sampled across the window."""
    span = promql.seconds(window)
    rate, step = max(1, min(PEAK_SPAN, span // 2)), max(1, span // 120)
    per_pod = f"sum by (pod) (rate(container_cpu_usage_seconds_total{{{usage}}}[{rate}s]))"
    return f"max_over_time({per_pod}[{window}:{step}s])"


def node_pressure(prom: Prometheus, *, window: str = "5m") -> list[NodePressure]:
    window = promql.window(window)
    nodes: dict[str, NodePressure] = {}

    def row(sample: Sample) -> NodePressure | None:
        node = sample.labels.get("node", "")
        return nodes.setdefault(node, NodePressure(node)) if node else None

    conditions = "|".join((*PRESSURES, "Ready"))
    for sample in prom.vector(
        f'kube_node_status_condition{{condition=~"{conditions}",status="true"}} == 1'
    ):
        found = row(sample)
        if found is None:
            continue
        condition = sample.labels.get("condition", "")
        if condition == "Ready":
            found.ready = True
        else:
            found.pressures.append(condition)
    for sample in prom.vector('kube_node_status_condition{condition="Ready"}'):
        found = row(sample)
        if found is not None and found.ready is None:
            found.ready = False
    fractions = {
        "cpu_used_of_allocatable": (
            f"sum by (node) (rate(node_cpu_usage_seconds_total[{window}]))",
            "cpu",
        ),
        "memory_used_of_allocatable": (
            f"sum by (node) (avg_over_time(node_memory_working_set_bytes[{window}]))",
            "memory",
        ),
        "cpu_requested_of_allocatable": (
            _requested("cpu"),
            "cpu",
        ),
        "memory_requested_of_allocatable": (
            _requested("memory"),
            "memory",
        ),
    }
    for attribute, (numerator, resource) in fractions.items():
        allocatable = f'sum by (node) (kube_node_status_allocatable{{resource="{resource}"}})'
        for sample in prom.vector(f"{numerator} / {allocatable}"):
            found = row(sample)
            if found is not None:
                setattr(found, attribute, sample.value)
    return [nodes[name] for name in sorted(nodes)]


def _owners(prom: Prometheus, where: str) -> dict[str, tuple[str, str]]:
    """pod -> (kind, name) of the workload that controls it (a Deployment for its ReplicaSets)."""
    replicasets = {
        s.labels["replicaset"]: (s.labels["owner_kind"], s.labels["owner_name"])
        for s in prom.vector(f'kube_replicaset_owner{{{where},owner_is_controller="true"}}')
        if "replicaset" in s.labels
    }
    owners: dict[str, tuple[str, str]] = {}
    for sample in prom.vector(f'kube_pod_owner{{{where},owner_is_controller="true"}}'):
        kind, name = sample.labels.get("owner_kind", ""), sample.labels.get("owner_name", "")
        if kind == "ReplicaSet" and name in replicasets:
            kind, name = replicasets[name]
        owners[sample.labels.get("pod", "")] = (kind, name)
    return owners


def _requested(resource: str) -> str:
    """Requests summed per node, and 0 for a node no pod with requests runs on."""
    return (
        f'(sum by (node) (kube_pod_container_resource_requests{{resource="{resource}",node!=""}})'
        f' or 0 * sum by (node) (kube_node_status_allocatable{{resource="{resource}"}}))'
    )


def _ratio(used: float, declared: float) -> float | None:
    return used / declared if declared > 0 else None
