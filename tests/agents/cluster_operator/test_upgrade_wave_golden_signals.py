"""An upgrade wave judged by the golden signals, against a real Prometheus scraping a sandbox of
Cluster API pools. The upgrade takes the cluster as it finds it (every Service's error ratio,
every workload's availability) before its first write; a Service that starts failing its
requests while the workers pool rolls (an `error-rate` fault, scheduled to begin once the
upgrade is under way) fails the wave's validation, which waits out its grace and then rolls the
wave back: the pool ends on v1.37, and the reason names the Service and its error ratio.
Checked on the objects the API server holds.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_servers.metrics.settings import MetricsSettings
from sandbox.server import Sandbox
from tests.support.cluster_operator import Operator
from tests.support.kubectl import Kubectl
from tests.support.machine_pools import cluster, control_plane, machine_deployment, template
from tests.support.pool_world import nodeless
from tests.support.prometheus import PROMETHEUS, running_prometheus
from tests.support.shop import WEB
from tests.support.waiting import eventually

pytestmark = [
    pytest.mark.skipif(
        PROMETHEUS is None and not os.environ.get("CI"),
        reason="no `prometheus` binary on PATH; `make install` installs it (required in CI)",
    ),
    pytest.mark.timeout(300),
]


def fail_web_once_workers_roll(sandbox: Sandbox, kubectl: Kubectl) -> None:
    """Web fails every request from the moment the workers pool is set to roll (a time fixed in
    advance raced the wave: a quick wave validated before the fault began)."""
    eventually(
        lambda: (
            kubectl.json("get", "md", "workers")["spec"]["template"]["spec"]["version"] == "v1.38.0"
        ),
        timeout=120,
        what="the workers pool set to roll",
    )
    sandbox.call(lambda c: c.faults.add({
        "kind": "error-rate", "selector": {"app": "web"}, "rate": 1.0,
        "at": c.clock.seconds() - c.faults.started,
    }))  # fmt: skip


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Sandbox]:
    with nodeless(tmp_path / "sandbox") as running:
        yield running


def pool_version(kubectl: Kubectl) -> str:
    return str(kubectl("get", "machinedeployment", "workers", "-n", "default",
                       "-o", "jsonpath={.spec.template.spec.version}"))  # fmt: skip


def test_a_wave_after_which_a_service_fails_its_requests_is_rolled_back(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    for obj in (cluster(), control_plane(version="v1.37.0"),
                template("standard", provision_seconds=5, cpu="4", memory="16Gi"),
                machine_deployment("workers", replicas=2)):  # fmt: skip
        kubectl("apply", "-f", "-", input=json.dumps(obj))
    kubectl("apply", "-f", "-", input=WEB)
    eventually(
        lambda: kubectl.json("get", "deploy", "web", "-n", "shop")["status"].get(
            "availableReplicas"
        ) == 2,
        what="web available on the workers pool",
    )  # fmt: skip
    with running_prometheus(sandbox.kubeconfig, tmp_path / "prometheus") as prom:
        served = 'sum(rate(http_requests_total{namespace="shop", service="web"}[30s]))'
        eventually(lambda: (prom.value(served) or 0) > 0, timeout=60, what="web's traffic seen")
        operator = Operator(sandbox, tmp_path)
        operator.metrics = MetricsSettings(prometheus_url=prom.url, kubeconfig=sandbox.kubeconfig)

        asked = operator.ask("upgrade the cluster to 1.38", thread="up")
        assert "Reply 'yes' to start" in asked.answer, asked.answer
        failing = threading.Thread(target=fail_web_once_workers_roll, args=(sandbox, kubectl))
        failing.start()
        done = operator.ask("yes", thread="up")
        failing.join(timeout=60)

    record = done.data["upgrade"]["record"]
    assert record["baseline"]["errors"].get("shop/web") == pytest.approx(0.0, abs=0.01), record
    [wave] = record["waves"]
    assert record["state"] == "rolled-back" and wave["state"] == "rolled-back", done.answer
    assert "after the wave, Service shop/web: error ratio" in wave["why"], wave
    assert "(0.00 before the upgrade)" in wave["why"], wave
    assert pool_version(kubectl) == "v1.37.0"
    assert "was stopped and its last wave rolled back" in done.answer
