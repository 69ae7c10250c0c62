"""A real Prometheus scrapes the sandbox's /kubecrew/v1/metrics and answers PromQL about it.

Skipped only on a developer machine without the `prometheus` binary (`make install` installs
it); in CI (`CI` set) a missing binary fails the test instead of hiding it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sandbox.server import Sandbox
from tests.support.kubectl import Kubectl
from tests.support.prometheus import PROMETHEUS, Prometheus, running_prometheus
from tests.support.waiting import eventually

pytestmark = pytest.mark.skipif(
    PROMETHEUS is None and not os.environ.get("CI"),
    reason="no `prometheus` binary on PATH; `make install` installs it (required in CI)",
)

MANIFESTS = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports: [{containerPort: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: misrouted}
spec:
  selector: {app: wbe}
  ports: [{port: 80}]
"""


def reaches(prom: Prometheus, promql: str, expected: float, *, timeout: float = 30) -> None:
    """Wait until the query has one series with the expected value (real seconds)."""

    def check() -> bool:
        got = prom.value(promql)
        assert got == expected, f"{promql} is {got}"
        return True

    eventually(check, timeout=timeout, what=f"{promql} == {expected}")


MISROUTED_ERROR_RATIO = (
    'sum(rate(http_requests_total{service="misrouted",code=~"5.."}[30s]))'
    ' / sum(rate(http_requests_total{service="misrouted"}[30s]))'
)
WEB_ERROR_RATIO = (
    'sum(rate(http_requests_total{service="web",code=~"5.."}[30s]))'
    ' / sum(rate(http_requests_total{service="web"}[30s]))'
)


@pytest.mark.kubectl
@pytest.mark.timeout(180)  # above the sum of the waits below, so a miss says which one
def test_prometheus_scrapes_cluster_state_and_service_traffic(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    kubectl.run("apply", "-f", "-", input=MANIFESTS)
    with running_prometheus(sandbox.kubeconfig, tmp_path / "prometheus") as prom:
        reaches(prom, 'up{job="sandbox"}', 1)
        reaches(prom, MISROUTED_ERROR_RATIO, 1.0)  # a selector that matches nothing: all 503
        reaches(prom, 'sum(kube_pod_status_phase{namespace="default",phase="Running"})', 2)
        reaches(prom, 'kube_deployment_status_replicas_available{deployment="web"}', 2)
        reaches(prom, WEB_ERROR_RATIO, 0.0)  # ready nginx pods answer everything
        served = prom.value('sum(rate(http_requests_total{service="web",code="200"}[30s]))')
        assert served is not None and served > 0
