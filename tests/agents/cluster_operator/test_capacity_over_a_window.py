"""The capacity review judges use over the CostPolicy's window when a real Prometheus scrapes the
sandbox: the shop's pods were busy for most of the window and are idle now. web (3 replicas of
100m) is idle by `top`'s one sample but not underused on average over the window, so no
downscale is proposed; api (one replica of 500m) is underused on average, and its CPU request
is sized from the busiest moment Prometheus saw, not from the quiet sample, and applied as
decided. The rationale and the report say the source.

The sandbox lives ten times faster than life and its CPU counters count sandbox seconds, so
Prometheus, dividing by real seconds, reads ten times what `top` shows: a pod `top` sees at 8m
is 80m to Prometheus. The test compares the two sources by their own numbers.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import time
from pathlib import Path

import pytest

from agents.cluster_operator.capacity import TARGET
from agents.cluster_operator.rightsizing import FLOOR, STEP
from agents.runtime.toolbox import Servers
from kubecrew.demo.shop import deployment, manifests, namespace
from mcp_servers.metrics.settings import MetricsSettings
from sandbox.cluster import Cluster
from sandbox.server import Sandbox
from tests.support.cluster_operator import Operator
from tests.support.kubectl import Kubectl
from tests.support.prometheus import PROMETHEUS, Prometheus, running_prometheus
from tests.support.waiting import eventually

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(
        PROMETHEUS is None and not os.environ.get("CI"),
        reason="no `prometheus` binary on PATH; `make install` installs it (required in CI)",
    ),
]
WINDOW = 30  # seconds: the CostPolicy's underused.window
BUSY, IDLE = 8, 1  # millicores per pod, as `top` reads them
SHOP = manifests(
    namespace(),
    deployment("web", replicas=3, cpu="100m"),
    deployment("api", replicas=1, cpu="500m"),
)
COST = f"""\
apiVersion: kubecrew.io/v1alpha1
kind: CostPolicy
metadata: {{name: shop-underused, labels: {{kubecrew.io/team: cluster-ops}}}}
spec:
  selector: {{namespaces: [shop]}}
  underused: {{metric: cpu_utilization, below: 0.2, window: {WINDOW}s}}
  allowedActions: [downscale, right-size]
"""
PODS = "/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods"


class WithPrometheus(Operator):
    """The operator with a metrics server in front of a Prometheus (None: without one)."""

    metrics: MetricsSettings | None = None

    def servers(self) -> Servers:
        return dataclasses.replace(super().servers(), metrics=self.metrics)


def use(sandbox: Sandbox, millicores: int, *, replacing: str = "") -> str:
    """Every shop pod uses `millicores` (by `top`) from now on, in place of `replacing`."""

    def change(cluster: Cluster) -> str:
        if replacing:
            cluster.world.profiles.clear(replacing)
        return cluster.world.profiles.override(
            namespace="shop", selector=None, image=None, changes={"cpu_millis": millicores}
        )

    return sandbox.call(change)


def top(kubectl: Kubectl) -> dict[str, float]:
    """Each shop pod's CPU by metrics.k8s.io, in millicores."""
    items = json.loads(kubectl("get", "--raw", PODS))["items"]
    return {
        i["metadata"]["name"]: sum(_millicores(c["usage"]["cpu"]) for c in i["containers"])
        for i in items
    }


def _millicores(text: str) -> float:
    if text.endswith("n"):
        return float(text[:-1]) / 1e6
    return float(text[:-1]) if text.endswith("m") else float(text) * 1000


def sample_of(sample: dict[str, float], name: str) -> float:
    return sum(m for pod, m in sample.items() if pod.startswith(f"{name}-"))


def busy_then_idle(sandbox: Sandbox, kubectl: Kubectl, prom: Prometheus) -> None:
    """Busy for most of the window as Prometheus saw it, then idle by the current sample."""
    busy = use(sandbox, BUSY)
    kubectl("apply", "-f", "-", input=SHOP)
    for name in ("web", "api"):
        kubectl("rollout", "status", f"deploy/{name}", "-n", "shop", "--timeout=60s")
    rate = 'sum(rate(container_cpu_usage_seconds_total{namespace="shop",container!=""}[5s]))'
    eventually(lambda: (prom.value(rate) or 0) > 0.1, timeout=30, what="busy pods in Prometheus")
    time.sleep(WINDOW * 0.75)
    use(sandbox, IDLE, replacing=busy)
    eventually(
        lambda: len(top(kubectl)) == 4 and max(top(kubectl).values()) < 2 * IDLE,
        timeout=20,
        what="idle pods in metrics.k8s.io",
    )
    time.sleep(WINDOW * 0.2)


def test_a_review_judges_the_window_not_the_quiet_sample(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    operator = WithPrometheus(sandbox, tmp_path)
    operator.policy("cost", COST)
    with running_prometheus(sandbox.kubeconfig, tmp_path / "prometheus") as prom:
        operator.metrics = MetricsSettings(prometheus_url=prom.url, kubeconfig=sandbox.kubeconfig)
        busy_then_idle(sandbox, kubectl, prom)
        sample = top(kubectl)
        outcome = operator.capacity()

    # web is idle by the sample (a downscale by `top`), busy over the window: nothing proposed.
    assert sample_of(sample, "web") / 300 < 0.2, sample
    assert outcome.data["savings"] == [], outcome.answer
    proposed = [c.arguments["action"] for c in operator.last_calls() if c.tool == "propose"]
    assert "scale" not in proposed and proposed.count("resize") == 1, proposed
    windows = [
        c.arguments["window"] for c in operator.last_calls() if c.tool == "workload_utilization"
    ]
    assert windows and set(windows) == {f"{WINDOW}s"}, windows

    # api is underused on average and sized from its peak, far above what one sample says.
    [api] = outcome.data["rightsizing"]
    assert api["workload"] == "Deployment/shop/api", api
    assert api["utilization"] < 0.2 and api["used_m"] < api["peak_m"], api
    assert 0.7 * BUSY * 10 <= api["peak_m"] <= 1.2 * BUSY * 10, api
    to = int(api["cpu_to"].removesuffix("m"))
    by_the_sample = max(FLOOR, math.ceil(sample_of(sample, "api") / TARGET / STEP) * STEP)
    assert to >= api["peak_m"] / TARGET and to > 5 * by_the_sample, api
    assert api["source"] == f"over {WINDOW}s from Prometheus (peak {api['peak_m']:.0f}m)", api
    assert api["outcome"] == "approved" and api["applied"] == api["cpu_to"], outcome.answer
    path = "jsonpath={.spec.template.spec.containers[0].resources.requests.cpu}"
    assert kubectl("get", "deploy/api", "-n", "shop", "-o", path).strip() == api["cpu_to"]

    proposal = operator.proposal(api["proposal"]).proposal
    assert proposal.metrics == {"cpu_utilization": api["utilization"]}
    assert f"over {WINDOW}s from Prometheus (peak" in proposal.rationale
    assert f"({api['utilization']:.0%}, over {WINDOW}s from Prometheus (peak" in outcome.answer
