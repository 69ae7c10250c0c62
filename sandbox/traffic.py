"""What the workloads did between two looks: requests per Service and CPU seconds per container.

The API and the MetricsBook say what is true *now* (which pods are ready, how much CPU a
container uses this second); Prometheus wants counters that only grow. `Traffic.advance(now)`
integrates the current state over the sandbox seconds since the previous call, holding it
constant in between (the exposition calls it on every scrape, so the step is one scrape interval).

Requests: every Service with a selector is offered the sum of the `requests_per_second` of the
application profiles of the pods it selects (or `DEFAULT_RPS` when they serve none but the Service
has ports: someone still calls it). Its ready endpoints (selected pods with Ready True and no
deletionTimestamp) answer them: 5xx for the weighted mean of their profiles' `error_rate`, 200 for
the rest; with no ready endpoint every request fails with 503. Latency is log-normal around each
profile's `latency_ms`, so the duration histogram has realistic spread without randomness.

This module knows profiles only through `ProfileSource` (what `sandbox.kubelet.profiles.ProfileBook`
offers) and usage only through `MetricsBook`; it writes nothing to the API and renders nothing.
"""

from __future__ import annotations

import functools
import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Protocol

from sandbox.metrics import MetricsBook
from sandbox.quantity import parse_quantity
from sandbox.store import Key, Obj, Store

SERVICES: Key = ("", "services")
PODS: Key = ("", "pods")

DEFAULT_RPS = 10.0  # offered to a Service with ports whose pods declare no traffic of their own
BUCKETS = (
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
)  # seconds (client default)
LATENCY_SPREAD = 0.5  # sigma of ln(latency): the p99 is about 3x the median
REFUSED_LATENCY = 0.001  # seconds to fail a request when no endpoint is ready
CODES = ("200", "500", "503")


class ProfileLike(Protocol):
    @property
    def requests_per_second(self) -> float: ...
    @property
    def error_rate(self) -> float: ...
    @property
    def latency_ms(self) -> float: ...


class ProfileSource(Protocol):
    version: int  # moves whenever a profile or override changes

    def profile_for(self, pod: Obj, container: Obj) -> ProfileLike: ...


@dataclass
class ServiceCounters:
    """Cumulative counts of one Service since the sandbox first saw it (floats: a rate of
    0.3 rps still adds up; the exposition shows whole requests)."""

    requests: dict[str, float] = field(default_factory=lambda: dict.fromkeys(CODES, 0.0))
    buckets: list[float] = field(default_factory=lambda: [0.0] * len(BUCKETS))  # cumulative
    count: float = 0.0
    seconds: float = 0.0  # the histogram's _sum


@dataclass(frozen=True)
class Backend:
    """One selected pod as traffic sees it."""

    rps: float
    error_rate: float
    latency: float  # median seconds
    ready: bool


@functools.lru_cache(maxsize=256)
def _fractions(median: float) -> tuple[float, ...]:
    """P(latency <= bound) for each bucket bound, for a log-normal latency with this median."""
    if median <= 0:
        return (1.0,) * len(BUCKETS)
    return tuple(
        0.5 * (1.0 + math.erf((math.log(b) - math.log(median)) / (LATENCY_SPREAD * math.sqrt(2))))
        for b in BUCKETS
    )


class Traffic:
    def __init__(self, store: Store, profiles: ProfileSource, metrics: MetricsBook) -> None:
        self._store = store
        self._profiles = profiles
        self._metrics = metrics
        self._last: float | None = None
        self._services: dict[tuple[str, str], ServiceCounters] = {}
        self._cpu: dict[tuple[str, str, str], float] = {}  # (namespace, pod, container) -> s
        self._node_cpu: dict[str, float] = {}
        # per pod: (resourceVersion, profiles.version) it was computed at, and the Backend
        self._backends: dict[tuple[str, str], tuple[tuple[str, int], Backend]] = {}

    # -- reading -------------------------------------------------------------------------------

    def services(self) -> list[tuple[str, str, ServiceCounters]]:
        """(namespace, service, counters), sorted."""
        return [(ns, name, self._services[(ns, name)]) for ns, name in sorted(self._services)]

    def container_cpu_seconds(self, namespace: str, pod: str, container: str) -> float:
        return self._cpu.get((namespace, pod, container), 0.0)

    def node_cpu_seconds(self, node: str) -> float:
        return self._node_cpu.get(node, 0.0)

    # -- integrating ---------------------------------------------------------------------------

    def advance(self, now: float) -> None:
        """Add what happened from the previous call to `now` (sandbox POSIX seconds)."""
        elapsed = 0.0 if self._last is None else max(now - self._last, 0.0)
        self._last = now if self._last is None else max(now, self._last)
        self._advance_services(elapsed)
        self._advance_cpu(elapsed)

    def _advance_services(self, elapsed: float) -> None:
        seen: dict[tuple[str, str], ServiceCounters] = {}
        backends: dict[tuple[str, str], tuple[tuple[str, int], Backend]] = {}
        by_namespace: dict[str, list[Obj]] = defaultdict(list)
        for service in self._store.list(SERVICES):
            if (service.get("spec") or {}).get("selector"):
                by_namespace[service["metadata"]["namespace"]].append(service)
        for namespace, services in by_namespace.items():
            pods = _PodIndex(self._store.list(PODS, namespace))
            for service in services:
                key = (namespace, service["metadata"]["name"])
                counters = seen[key] = self._services.get(key) or ServiceCounters()
                if elapsed <= 0:
                    continue
                chosen = [
                    self._backend(pod, backends)
                    for pod in pods.selected(service["spec"]["selector"])
                ]
                _serve(counters, chosen, elapsed, has_ports=bool(service["spec"].get("ports")))
        self._services = seen
        if elapsed > 0:
            self._backends = backends  # forget pods no Service selects any more

    def _backend(
        self, pod: Obj, backends: dict[tuple[str, str], tuple[tuple[str, int], Backend]]
    ) -> Backend:
        """The pod's traffic traits, recomputed only when the pod or the profiles changed."""
        meta = pod["metadata"]
        key = (meta["namespace"], meta["name"])
        stamp = (meta.get("resourceVersion", ""), self._profiles.version)
        known = backends.get(key) or self._backends.get(key)
        if known is not None and known[0] == stamp:
            backends[key] = known
            return known[1]
        profiles = [self._profiles.profile_for(pod, c) for c in pod["spec"].get("containers", ())]
        server = max(profiles, key=lambda p: p.requests_per_second, default=None)
        found = Backend(
            rps=sum(p.requests_per_second for p in profiles),
            error_rate=server.error_rate if server else 0.0,
            latency=(server.latency_ms if server else 20.0) / 1000.0,
            ready=_ready(pod),
        )
        backends[key] = (stamp, found)
        return found

    def _advance_cpu(self, elapsed: float) -> None:
        cpu: dict[tuple[str, str, str], float] = {}
        for metrics in self._metrics.pods(None):
            meta = metrics["metadata"]
            for container in metrics["containers"]:
                key = (meta["namespace"], meta["name"], container["name"])
                used = parse_quantity(container["usage"]["cpu"]) * elapsed
                cpu[key] = self._cpu.get(key, 0.0) + used
        self._cpu = cpu
        nodes: dict[str, float] = {}
        for metrics in self._metrics.nodes():
            name = metrics["metadata"]["name"]
            used = parse_quantity(metrics["usage"]["cpu"]) * elapsed
            nodes[name] = self._node_cpu.get(name, 0.0) + used
        self._node_cpu = nodes


def _serve(
    counters: ServiceCounters, backends: list[Backend], elapsed: float, *, has_ports: bool
) -> None:
    offered = sum(b.rps for b in backends) or (DEFAULT_RPS if has_ports else 0.0)
    total = offered * elapsed
    if total <= 0:
        return
    ready = [b for b in backends if b.ready]
    counters.count += total
    if not ready:
        counters.requests["503"] += total
        counters.seconds += total * REFUSED_LATENCY
        for index, limit in enumerate(BUCKETS):
            counters.buckets[index] += total if limit >= REFUSED_LATENCY else 0.0
        return
    weight = sum(b.rps for b in ready)
    by_latency: dict[float, float] = defaultdict(float)  # median latency -> share of requests
    errors = 0.0
    for backend in ready:
        share = backend.rps / weight if weight else 1.0 / len(ready)
        by_latency[backend.latency] += share
        errors += share * backend.error_rate
    counters.requests["500"] += total * errors
    counters.requests["200"] += total * (1.0 - errors)
    mean_spread = math.exp(LATENCY_SPREAD**2 / 2)  # mean / median of a log-normal
    for latency, share in by_latency.items():
        served = total * share
        counters.seconds += served * latency * mean_spread
        for index, fraction in enumerate(_fractions(latency)):
            counters.buckets[index] += served * fraction


class _PodIndex:
    """A namespace's live pods by label, so each Service's selector looks at few candidates."""

    def __init__(self, pods: list[Obj]) -> None:
        self._by_label: dict[tuple[str, str], list[Obj]] = defaultdict(list)
        for pod in pods:
            if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue
            for pair in (pod["metadata"].get("labels") or {}).items():
                self._by_label[pair].append(pod)

    def selected(self, selector: dict[str, str]) -> list[Obj]:
        buckets = [self._by_label.get(pair, []) for pair in selector.items()]
        smallest = min(buckets, key=len)
        return [
            pod
            for pod in smallest
            if all(pod["metadata"]["labels"].get(k) == v for k, v in selector.items())
        ]


def _ready(pod: Obj) -> bool:
    if pod["metadata"].get("deletionTimestamp"):
        return False
    conditions = (pod.get("status") or {}).get("conditions") or ()
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
