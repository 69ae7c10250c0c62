"""What the metrics server needs to know at start: where Prometheus is, and which cluster to ask
when there is none.

A Prometheus URL (with an optional bearer token file and CA file, as a Prometheus behind an
authenticating proxy needs) makes every tool answer from PromQL. Without one, the server answers
what it can from the cluster's metrics.k8s.io API through the kubeconfig/context given here, and
says which answers are unavailable. The settings hold paths and names only: no clients, so tests
and hosts build them freely and the engines create what they need.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

DEFAULT_TIMEOUT = 15.0  # seconds per Prometheus request
MAX_SERIES = 200  # series kept from a raw query; the rest are counted in a note
MAX_POINTS = 300  # points per series kept from a range query


@dataclass(frozen=True)
class MetricsSettings:
    prometheus_url: str | None = None  # None: answer from metrics.k8s.io (fewer answers)
    bearer_token_file: Path | None = None
    ca_file: Path | None = None
    kubeconfig: Path | None = None  # None: $KUBECONFIG or ~/.kube/config
    context: str | None = None  # None: the kubeconfig's current context
    timeout: float = DEFAULT_TIMEOUT

    @property
    def has_prometheus(self) -> bool:
        return bool(self.prometheus_url)
