"""The metrics server's engine: one object that answers every tool, from Prometheus or without it.

`MetricsEngine(settings)` decides once where answers come from. With a Prometheus URL, every
answer is PromQL (`signals`, `utilization`, `slo`, raw queries); without one, utilization and node
pressure come from metrics.k8s.io (`fallback`) and the rest raise Unavailable saying what would
enable them. Every method returns a JSON-able dict, with lists bounded by `common/bounds.py` and
raw query results cut to `MAX_SERIES` series of `MAX_POINTS` points, each cut named in a note.

Clients are created on first use and closed by `close()`; nothing here knows MCP.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Any

from core.connection import Api, Clusters
from core.errors import InvalidArgument
from mcp_servers.common import arguments, bounds
from mcp_servers.common.watched import WatchedClusters
from mcp_servers.metrics import fallback, promql, signals, slo, utilization
from mcp_servers.metrics.prometheus import Json, Prometheus
from mcp_servers.metrics.settings import MAX_POINTS, MAX_SERIES, MetricsSettings

MAX_RANGE_POINTS = 11_000  # Prometheus refuses more points per series than this


class MetricsEngine:
    def __init__(self, settings: MetricsSettings) -> None:
        self.settings = settings
        self._prometheus: Prometheus | None = None
        self._clusters: Clusters | None = None

    def close(self) -> None:
        """Close the clients; a later call opens new ones (a server outlives its sessions)."""
        if self._prometheus is not None:
            self._prometheus.close()
            self._prometheus = None
        if self._clusters is not None:
            self._clusters.close()
            self._clusters = None

    # -- where answers come from ---------------------------------------------------------------

    def sources(self) -> Json:
        if self.settings.has_prometheus:
            return {
                "source": "prometheus",
                "prometheus_url": self.settings.prometheus_url,
                "available": [
                    "query",
                    "query_range",
                    "golden_signals",
                    "workload_utilization",
                    "node_pressure",
                    "slo_burn_rate",
                ],
                "unavailable": [],
            }
        return {
            "source": "metrics.k8s.io",
            "available": ["workload_utilization (current sample only)", "node_pressure"],
            "unavailable": ["query", "query_range", "golden_signals", "slo_burn_rate"],
            "note": fallback.WITHOUT_PROMETHEUS.format(what="request-based answers"),
        }

    def _prom(self, what: str) -> Prometheus:
        if not self.settings.has_prometheus:
            raise fallback.unavailable(what)
        if self._prometheus is None:
            self._prometheus = Prometheus(self.settings)
        return self._prometheus

    def _api(self) -> Api:
        if self._clusters is None:
            self._clusters = WatchedClusters(self.settings.kubeconfig, self.settings.context)
        return self._clusters.api()

    # -- raw PromQL ----------------------------------------------------------------------------

    def query(self, promql_text: str, *, at: float | None = None) -> Json:
        data = self._prom("a PromQL query").query(_promql(promql_text), time=at)
        return _bounded(data)

    def query_range(
        self, promql_text: str, *, since: str, step: str, end: float | None = None
    ) -> Json:
        span = promql.seconds(promql.window(since, argument="since"))
        stride = promql.seconds(promql.window(step, argument="step"))
        if span / stride > MAX_RANGE_POINTS:
            raise InvalidArgument(
                f"{since} at a step of {step} is more than {MAX_RANGE_POINTS} points: "
                "use a larger step or a shorter range"
            )
        finish = end if end is not None else time.time()
        data = self._prom("a PromQL range query").query_range(
            _promql(promql_text), start=finish - span, end=finish, step=stride
        )
        return _bounded(data)

    # -- helpers that need no PromQL -----------------------------------------------------------

    def golden_signals(self, *, namespace: str, service: str, window: str) -> Json:
        prom = self._prom("golden signals (request rate, errors, latency)")
        return signals.golden_signals(
            prom, namespace=namespace, service=service, window=window
        ).to_dict()

    def slo_burn_rate(
        self,
        *,
        namespace: str,
        service: str,
        objective: float,
        windows: list[str],
        threshold: float,
    ) -> Json:
        prom = self._prom("the SLO burn rate")
        report = slo.burn_rate(
            prom,
            namespace=namespace,
            service=service,
            objective=objective,
            windows=windows,
            threshold=threshold,
        )
        return report.to_dict()

    def workload_utilization(
        self, *, namespace: str, window: str, workload: str | None, limit: int, offset: int
    ) -> Json:
        namespace = arguments.namespace(namespace)
        window = promql.window(window)
        if workload is not None:
            arguments.name(workload, argument="workload")
        if self.settings.has_prometheus:
            rows = utilization.workload_usage(self._prom(""), namespace=namespace, window=window)
            source, note = "prometheus", ""
        else:
            rows = fallback.workload_usage(self._api(), namespace=namespace)
            source = "metrics.k8s.io"
            note = (
                "current sample from metrics.k8s.io: the window is ignored and peak equals "
                "current use; " + fallback.WITHOUT_PROMETHEUS.format(what="use over a window")
            )
        if workload is not None:
            rows = [row for row in rows if row.name == workload]
        chosen = bounds.page(rows, limit=limit, offset=offset, what="workloads")
        return {
            "namespace": namespace,
            "window": window,
            "source": source,
            "units": {"cpu": "cores", "memory": "bytes"},
            "workloads": [row.to_dict() for row in chosen.items],
            "total": chosen.total,
            "note": "; ".join(n for n in (note, chosen.note) if n),
        }

    def node_pressure(self, *, window: str, limit: int, offset: int) -> Json:
        window = promql.window(window)
        if self.settings.has_prometheus:
            rows = utilization.node_pressure(self._prom(""), window=window)
            source, note = "prometheus", ""
        else:
            rows = fallback.node_pressure(self._api())
            source = "metrics.k8s.io"
            note = "current sample; " + fallback.WITHOUT_PROMETHEUS.format(
                what="requested-of-allocatable"
            )
        # the most pressed first: conditions, then the highest use
        rows.sort(key=lambda r: (-len(r.pressures), -(r.memory_used_of_allocatable or 0.0)))
        chosen = bounds.page(rows, limit=limit, offset=offset, what="nodes")
        return {
            "window": window,
            "source": source,
            "nodes": [asdict(row) for row in chosen.items],
            "total": chosen.total,
            "note": "; ".join(n for n in (note, chosen.note) if n),
        }


def _promql(text: str) -> str:
    if not text.strip() or len(text) > 10_000:
        raise InvalidArgument("promql must be a non-empty PromQL expression of at most 10000 chars")
    return text


def _bounded(data: Json) -> Json:
    """A query's data with at most MAX_SERIES series and MAX_POINTS points each (the latest)."""
    result = data.get("result")
    kind = data.get("resultType", "")
    if not isinstance(result, list):
        return {"resultType": kind, "result": result, "note": ""}
    notes = []
    if len(result) > MAX_SERIES:
        notes.append(
            f"{len(result) - MAX_SERIES} of {len(result)} series left out: aggregate "
            "(sum by, topk) or narrow the label matchers"
        )
    kept: list[Any] = []
    for series in result[:MAX_SERIES]:
        values = series.get("values") if isinstance(series, dict) else None
        if isinstance(values, list) and len(values) > MAX_POINTS:
            series = {**series, "values": values[-MAX_POINTS:]}
            if not any("points" in n for n in notes):
                notes.append(f"series cut to their last {MAX_POINTS} points: use a larger step")
        kept.append(series)
    return {"resultType": kind, "result": kept, "series": len(result), "note": "; ".join(notes)}
