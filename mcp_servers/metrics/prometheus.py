"""Talking to a Prometheus HTTP API: instant and range queries, answers as plain JSON.

`Prometheus(settings)` wraps one `httpx.Client` (bearer token from a file, CA file for TLS).
`query(promql)` and `query_range(promql, ...)` return the `data` of a successful answer; every
failure becomes the tool error tree here, once: a PromQL mistake (400/422) is InvalidArgument
with Prometheus's own explanation, 401/403 is PermissionDenied, anything unreachable or 5xx is
Unavailable. PromQL is always sent as the `query` form parameter, never spliced into a URL.

It knows nothing of services, workloads or SLOs: the helpers (`signals`, `utilization`, `slo`)
build their PromQL from validated names and read the numbers back with `scalar` and `vector`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import httpx

from core.errors import InvalidArgument, PermissionDenied, Unavailable
from mcp_servers.metrics.settings import MetricsSettings

Json = dict[str, Any]


@dataclass(frozen=True)
class Sample:
    """One series of an instant vector: its labels and value (NaN kept as None)."""

    labels: dict[str, str]
    value: float | None


class Prometheus:
    def __init__(self, settings: MetricsSettings) -> None:
        if not settings.prometheus_url:
            raise InvalidArgument("no Prometheus URL configured (--prometheus-url)")
        headers = {"Accept": "application/json"}
        if settings.bearer_token_file is not None:
            token = settings.bearer_token_file.read_text().strip()
            headers["Authorization"] = f"Bearer {token}"
        verify: bool | str = str(settings.ca_file) if settings.ca_file else True
        self.url = settings.prometheus_url.rstrip("/")
        self._client = httpx.Client(
            base_url=self.url, headers=headers, verify=verify, timeout=settings.timeout
        )

    def close(self) -> None:
        self._client.close()

    def query(self, promql: str, *, time: float | None = None) -> Json:
        form: dict[str, str] = {"query": promql}
        if time is not None:
            form["time"] = _number(time)
        return self._post("/api/v1/query", form, promql)

    def query_range(self, promql: str, *, start: float, end: float, step: float) -> Json:
        form = {
            "query": promql,
            "start": _number(start),
            "end": _number(end),
            "step": _number(step),
        }
        return self._post("/api/v1/query_range", form, promql)

    def vector(self, promql: str) -> list[Sample]:
        """An instant query expected to give a vector (or scalar), as Samples."""
        data = self.query(promql)
        if data.get("resultType") == "scalar":
            return [Sample({}, _value(data["result"][1]))]
        return [
            Sample(dict(item.get("metric") or {}), _value(item["value"][1]))
            for item in data.get("result") or ()
        ]

    def scalar(self, promql: str) -> float | None:
        """The value of a query that yields at most one series (None when it yields none)."""
        samples = self.vector(promql)
        return samples[0].value if samples else None

    def _post(self, path: str, form: dict[str, str], promql: str) -> Json:
        try:
            response = self._client.post(path, data=form)
        except httpx.HTTPError as exc:
            raise Unavailable(
                f"Prometheus at {self.url} did not answer ({exc}); check that it runs and "
                "that --prometheus-url points at it, then retry"
            ) from exc
        try:
            body: Json = response.json()
        except ValueError:
            body = {}
        if response.status_code in (400, 422) or body.get("errorType") in ("bad_data",):
            raise InvalidArgument(
                f"Prometheus rejected the query {promql!r}: {body.get('error') or response.text}"
                "; fix the PromQL and retry"
            )
        if response.status_code in (401, 403):
            raise PermissionDenied(
                f"Prometheus at {self.url} refused the credentials ({response.status_code}); "
                "check --bearer-token-file"
            )
        if response.status_code != 200 or body.get("status") != "success":
            raise Unavailable(
                f"Prometheus at {self.url} answered {response.status_code}: "
                f"{body.get('error') or response.text[:200]}; retry later"
            )
        data: Json = body.get("data") or {}
        return data


def _value(raw: Any) -> float | None:
    number = float(raw)
    return None if math.isnan(number) or math.isinf(number) else number


def _number(value: float) -> str:
    return repr(float(value))
