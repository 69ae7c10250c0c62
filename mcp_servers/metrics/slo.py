"""How fast a Service spends its error budget: burn rates of an availability objective.

For an objective such as 0.999 (99.9% of requests succeed), the error budget is 1 - objective;
the burn rate over a window is the window's error ratio divided by that budget. A burn rate of 1
spends the budget exactly over the SLO period; the multi-window alerting practice (Google SRE
workbook) pages when both a long and a short window burn fast (14.4 over 1h and 5m for a 30-day
period). Each window is reported with its error ratio and burn rate; `alerting` says whether all
the given windows burn above `threshold`.

It reuses the golden-signals PromQL (`signals.queries`), so both tools agree on what an error is.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from core.errors import InvalidArgument, NotFound
from mcp_servers.metrics import signals
from mcp_servers.metrics.prometheus import Prometheus

DEFAULT_WINDOWS = ("5m", "1h")
DEFAULT_THRESHOLD = 14.4


@dataclass(frozen=True)
class WindowBurn:
    window: str
    requests_per_second: float
    error_ratio: float | None  # None: no requests in the window
    burn_rate: float | None


@dataclass(frozen=True)
class BurnReport:
    namespace: str
    service: str
    objective: float
    error_budget: float
    threshold: float
    windows: list[WindowBurn]
    alerting: bool  # every window with traffic burns above the threshold

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def burn_rate(
    prom: Prometheus,
    *,
    namespace: str,
    service: str,
    objective: float,
    windows: tuple[str, ...] | list[str] = DEFAULT_WINDOWS,
    threshold: float = DEFAULT_THRESHOLD,
) -> BurnReport:
    if not 0.0 < objective < 1.0:
        raise InvalidArgument(
            f"objective {objective} must be a fraction between 0 and 1, e.g. 0.999 for 99.9%"
        )
    if not windows or len(windows) > 6:
        raise InvalidArgument("give between one and six windows, e.g. ['5m', '1h']")
    budget = 1.0 - objective
    burns = []
    for window in windows:
        built = signals.queries(namespace, service, window)
        total = prom.scalar(built["requests_per_second"])
        if total is None:
            raise NotFound(
                f"no http_requests_total series for service {service!r} in namespace "
                f"{namespace!r}: check the Service exists and Prometheus scrapes its traffic"
            )
        errors = prom.scalar(built["errors_per_second"]) or 0.0
        ratio = errors / total if total > 0 else None
        burns.append(
            WindowBurn(window, total, ratio, ratio / budget if ratio is not None else None)
        )
    measured = [b.burn_rate for b in burns if b.burn_rate is not None]
    return BurnReport(
        namespace=namespace,
        service=service,
        objective=objective,
        error_budget=budget,
        threshold=threshold,
        windows=burns,
        alerting=bool(measured) and all(rate > threshold for rate in measured),
    )
