"""The golden signals of a Service from Prometheus, without the caller writing PromQL.

Traffic is `http_requests_total{namespace, service, code}` (a counter per status code) and latency
`http_request_duration_seconds_bucket{namespace, service, le}` (a histogram), the names an
instrumented application's client library exposes and the sandbox mirrors. From them, over one
window: request rate (per second), error ratio (5xx over all), and p50/p95/p99 latency from the
histogram. A Service with no series is NotFound, with what to check; a window with no requests
answers a zero rate and no ratio or latency (None), rather than a NaN.

It knows Prometheus only through `Prometheus.scalar`; it knows nothing of MCP.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from core.errors import NotFound
from mcp_servers.metrics import promql
from mcp_servers.metrics.prometheus import Prometheus

QUANTILES = (("p50", 0.5), ("p95", 0.95), ("p99", 0.99))


@dataclass(frozen=True)
class GoldenSignals:
    namespace: str
    service: str
    window: str
    requests_per_second: float
    errors_per_second: float
    error_ratio: float | None  # None: no requests in the window
    latency_seconds: dict[str, float | None]  # p50, p95, p99
    queries: dict[str, str]  # the PromQL behind each number, to refine by hand

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def queries(namespace: str, service: str, window: str) -> dict[str, str]:
    where = promql.matchers(namespace=namespace, service=service)
    window = promql.window(window)
    total = f"sum(rate(http_requests_total{{{where}}}[{window}]))"
    errors = f'sum(rate(http_requests_total{{{where},code=~"5.."}}[{window}]))'
    built = {"requests_per_second": total, "errors_per_second": errors}
    buckets = f"sum by (le) (rate(http_request_duration_seconds_bucket{{{where}}}[{window}]))"
    for label, q in QUANTILES:
        built[f"latency_{label}"] = f"histogram_quantile({q}, {buckets})"
    return built


def golden_signals(
    prom: Prometheus, *, namespace: str, service: str, window: str = "5m"
) -> GoldenSignals:
    built = queries(namespace, service, window)
    total = prom.scalar(built["requests_per_second"])
    if total is None:
        raise NotFound(
            f"no http_requests_total series for service {service!r} in namespace "
            f"{namespace!r}: check the Service exists, has a selector and that Prometheus "
            "scrapes its pods (or widen the window)"
        )
    errors = prom.scalar(built["errors_per_second"]) or 0.0
    latency = {label: prom.scalar(built[f"latency_{label}"]) for label, _ in QUANTILES}
    if total <= 0:
        latency = dict.fromkeys(latency)
    return GoldenSignals(
        namespace=namespace,
        service=service,
        window=window,
        requests_per_second=total,
        errors_per_second=errors,
        error_ratio=errors / total if total > 0 else None,
        latency_seconds=latency,
        queries=built,
    )
