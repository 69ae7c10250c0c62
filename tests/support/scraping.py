"""A real Prometheus scraping a crew part's `/metrics` (the health port: kubecrew.health).

    with scraping(f"127.0.0.1:{port}", tmp_path / "prometheus") as prom:
        prom.value("sum(kubecrew_incidents_opened_total)")

The sandbox's Prometheus (tests/support/prometheus.py) scrapes the API server over TLS with a
token; a crew part serves plain HTTP on loopback, so only the scrape config differs: the process
(`prometheus_on`) and the query client are that module's.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml

from tests.support.prometheus import PROMETHEUS, Prometheus, PrometheusError, prometheus_on

JOB = "kubecrew"


@contextmanager
def scraping(target: str, workdir: Path, *, timeout: float = 30) -> Iterator[Prometheus]:
    """Prometheus scraping `http://<target>/metrics` every second, for the block."""
    if PROMETHEUS is None:
        raise PrometheusError("no `prometheus` on PATH: run `make install` (installs it)")
    workdir.mkdir(parents=True, exist_ok=True)
    scrape = {
        "job_name": JOB,
        "metrics_path": "/metrics",
        "scrape_interval": "1s",
        "scrape_timeout": "1s",
        "static_configs": [{"targets": [target]}],
    }
    config = workdir / "prometheus.yml"
    global_ = {"scrape_interval": "1s", "evaluation_interval": "1s"}
    config.write_text(yaml.safe_dump({"global": global_, "scrape_configs": [scrape]}))
    with prometheus_on(config, workdir, timeout=timeout) as prometheus:
        yield prometheus
