"""What the workloads consume and serve: cAdvisor-style container and node usage, and the
per-Service request traffic.

Usage comes from the MetricsBook (what the simulated kubelet last measured) and its CPU counters
from `Traffic`, which integrates usage over sandbox time; the request counters and the latency
histogram come from `Traffic` as well. Counts of requests are shown as whole requests, the way an
application's client library counts them.
"""

from __future__ import annotations

import math

from sandbox.exposition.text import Exposition, labels
from sandbox.metrics import MetricsBook
from sandbox.quantity import parse_quantity
from sandbox.store import Key, Store
from sandbox.traffic import BUCKETS, CODES, Traffic

PODS: Key = ("", "pods")


def render_usage(out: Exposition, store: Store, metrics: MetricsBook, traffic: Traffic) -> None:
    cpu = out.counter(
        "container_cpu_usage_seconds_total", "Cumulative cpu time consumed in seconds."
    )
    working_set = out.gauge(
        "container_memory_working_set_bytes", "Current working set of the container in bytes"
    )
    usage = out.gauge(
        "container_memory_usage_bytes",
        "Current memory usage in bytes, including all memory regardless of when it was accessed",
    )
    limit = out.gauge("container_spec_memory_limit_bytes", "Memory limit for the container.")
    for measured in metrics.pods(None):
        namespace, name = measured["metadata"]["namespace"], measured["metadata"]["name"]
        pod = store.get(PODS, namespace, name)
        if pod is None:
            continue
        spec = pod.get("spec") or {}
        containers = {c["name"]: c for c in spec.get("containers") or ()}
        where = labels(("namespace", namespace), ("pod", name), ("node", spec.get("nodeName", "")))
        for container in measured["containers"]:
            declared = containers.get(container["name"]) or {}
            named = labels(("container", container["name"]), ("image", declared.get("image", "")))
            series = f"{where},{named}"
            memory = parse_quantity(container["usage"]["memory"])
            cpu.add(series, traffic.container_cpu_seconds(namespace, name, container["name"]))
            working_set.add(series, memory)
            usage.add(series, memory)
            limits = (declared.get("resources") or {}).get("limits") or {}
            limit.add(series, parse_quantity(limits["memory"]) if "memory" in limits else 0)
    node_cpu = out.counter(
        "node_cpu_usage_seconds_total", "Cumulative cpu time consumed by the node in core-seconds"
    )
    node_memory = out.gauge(
        "node_memory_working_set_bytes", "Current working set of the node in bytes"
    )
    for measured in metrics.nodes():
        node = measured["metadata"]["name"]
        where = labels(("node", node))
        node_cpu.add(where, traffic.node_cpu_seconds(node))
        node_memory.add(where, parse_quantity(measured["usage"]["memory"]))


def render_traffic(out: Exposition, traffic: Traffic) -> None:
    requests = out.counter(
        "http_requests_total", "Requests answered by the Service's pods, by status code."
    )
    duration = out.family(
        "http_request_duration_seconds", "histogram", "Latency of the Service's requests."
    )
    bounds = [f'le="{bound}"' for bound in BUCKETS]
    for namespace, name, counters in traffic.services():
        base = labels(("namespace", namespace), ("service", name))
        for code in CODES:
            requests.add(f'{base},code="{code}"', math.floor(counters.requests[code]))
        total = math.floor(counters.count)
        for bound, cumulative in zip(bounds, counters.buckets, strict=True):
            duration.add(f"{base},{bound}", min(math.floor(cumulative), total), suffix="_bucket")
        duration.add(f'{base},le="+Inf"', total, suffix="_bucket")
        duration.add(base, counters.seconds, suffix="_sum")
        duration.add(base, total, suffix="_count")
