"""The metrics tools against a real Prometheus scraping a sandbox, through the MCP client.

One sandbox and one Prometheus serve the module: a Deployment behind a Service with ready
endpoints (`web`), a Service whose selector matches nothing (`misrouted`), and a Deployment that
a fault makes fail half of its requests (`flaky`). Prometheus scrapes every real second while the
sandbox runs ten times faster, so rates read ten times the profile's; the tests assert shapes and
ratios, which the speed-up does not change.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from mcp_servers.metrics.settings import MetricsSettings
from sandbox.server import Sandbox
from tests.mcp_servers.metrics.session import Answer, call, tools
from tests.support.kubectl import Kubectl
from tests.support.prometheus import PROMETHEUS, running_prometheus
from tests.support.shop import WEB
from tests.support.waiting import eventually

pytestmark = [
    pytest.mark.skipif(
        PROMETHEUS is None and not os.environ.get("CI"),
        reason="no `prometheus` binary on PATH; `make install` installs it (required in CI)",
    ),
    pytest.mark.timeout(180),
]

NAMESPACE = "shop"
MANIFESTS = (
    WEB
    + """---
apiVersion: v1
kind: Service
metadata: {name: misrouted, namespace: shop}
spec:
  selector: {app: wbe}
  ports: [{port: 80}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: flaky, namespace: shop}
spec:
  replicas: 1
  selector: {matchLabels: {app: flaky}}
  template:
    metadata: {labels: {app: flaky}}
    spec:
      containers:
      - name: flaky
        image: nginx:1.27
        ports: [{containerPort: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: flaky, namespace: shop}
spec:
  selector: {app: flaky}
  ports: [{port: 80}]
"""
)


@pytest.fixture(scope="module")
def settings(
    shared_sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[MetricsSettings]:
    workdir = tmp_path_factory.mktemp("metrics")
    Kubectl(shared_sandbox.kubeconfig, workdir / "kube-cache").run(
        "apply", "-f", "-", input=MANIFESTS
    )
    with running_prometheus(shared_sandbox.kubeconfig, workdir / "prometheus") as prom:
        configured = MetricsSettings(prometheus_url=prom.url, kubeconfig=shared_sandbox.kubeconfig)

        def web_is_served() -> bool:
            answer = call(
                configured, "golden_signals", service="web", namespace=NAMESPACE, window="30s"
            )
            assert not answer.error, answer.text
            assert answer.data["requests_per_second"] > 0
            assert answer.data["error_ratio"] == pytest.approx(0.0, abs=0.01)
            return True

        eventually(web_is_served, timeout=60, what="web served without errors")
        yield configured


def signals(settings: MetricsSettings, service: str, window: str = "30s") -> Answer:
    answer = call(settings, "golden_signals", service=service, namespace=NAMESPACE, window=window)
    assert not answer.error, answer.text
    return answer


def test_golden_signals_of_a_healthy_service(settings: MetricsSettings) -> None:
    data = signals(settings, "web").data
    assert data["requests_per_second"] > 0
    assert data["error_ratio"] == pytest.approx(0.0, abs=0.01)
    latency = data["latency_seconds"]
    # nginx's profile answers in about 3 ms (log-normal): p50 near it, tails above
    assert 0.001 < latency["p50"] < 0.006
    assert latency["p50"] <= latency["p95"] <= latency["p99"] < 0.05
    assert 'service="web"' in data["queries"]["requests_per_second"]


def test_golden_signals_of_a_service_whose_selector_matches_nothing(
    settings: MetricsSettings,
) -> None:
    def all_fail() -> bool:
        data = signals(settings, "misrouted").data
        assert data["requests_per_second"] > 0
        assert data["error_ratio"] == pytest.approx(1.0, abs=0.01)
        return True

    eventually(all_fail, timeout=30, what="misrouted answers only 503s")


def test_error_rate_fault_raises_the_error_ratio(
    settings: MetricsSettings, shared_sandbox: Sandbox
) -> None:
    assert signals(settings, "flaky").data["error_ratio"] == pytest.approx(0.0, abs=0.01)
    shared_sandbox.call(
        lambda cluster: cluster.faults.add(
            {"kind": "error-rate", "rate": 0.5, "namespace": NAMESPACE, "selector": "app=flaky"}
        )
    )

    def half_fail() -> bool:
        ratio = signals(settings, "flaky", window="10s").data["error_ratio"]
        assert ratio is not None and 0.4 < ratio < 0.6, ratio
        return True

    eventually(half_fail, timeout=60, what="flaky fails about half of its requests")


def test_slo_burn_rate_alerts_only_for_the_failing_service(settings: MetricsSettings) -> None:
    def burning() -> bool:
        answer = call(
            settings,
            "slo_burn_rate",
            service="misrouted",
            namespace=NAMESPACE,
            objective=0.999,
            windows=["10s", "30s"],
        )
        assert not answer.error, answer.text
        assert answer.data["alerting"] is True
        assert all(w["burn_rate"] == pytest.approx(1000, rel=0.02) for w in answer.data["windows"])
        return True

    eventually(burning, timeout=30, what="misrouted burns its budget 1000x")
    healthy = call(
        settings,
        "slo_burn_rate",
        service="web",
        namespace=NAMESPACE,
        objective=0.999,
        windows=["30s"],
    )
    assert not healthy.error, healthy.text
    assert healthy.data["alerting"] is False
    assert healthy.data["windows"][0]["burn_rate"] < 1


def test_workload_utilization_has_a_row_per_deployment_with_requests(
    settings: MetricsSettings,
) -> None:
    def measured() -> dict[str, object]:
        answer = call(settings, "workload_utilization", namespace=NAMESPACE, window="1m")
        assert not answer.error, answer.text
        assert answer.data["source"] == "prometheus"
        rows = {(r["kind"], r["name"]): r for r in answer.data["workloads"]}
        web = rows.get(("Deployment", "web"))
        assert web is not None, rows
        assert web["pods"] == 2
        assert web["cpu_used"] > 0 and web["cpu_peak"] > 0 and web["memory_peak"] > 0
        return dict(web)

    web = eventually(measured, timeout=30, what="web's usage in Prometheus")
    assert web["cpu_requests"] == pytest.approx(0.2)
    assert web["memory_requests"] == 2 * 32 * 2**20
    assert web["memory_limits"] == 2 * 64 * 2**20
    assert web["cpu_limits"] == 0 and web["memory_peak_of_limits"] is not None
    assert web["cpu_of_requests"] is not None and web["cpu_of_requests"] > 0


def test_workload_utilization_filters_one_workload(settings: MetricsSettings) -> None:
    answer = call(
        settings, "workload_utilization", namespace=NAMESPACE, window="1m", workload="flaky"
    )
    assert not answer.error, answer.text
    assert [(r["kind"], r["name"]) for r in answer.data["workloads"]] == [("Deployment", "flaky")]


def test_node_pressure_reports_every_node_ready_with_use(settings: MetricsSettings) -> None:
    answer = call(settings, "node_pressure", window="30s")
    assert not answer.error, answer.text
    nodes = answer.data["nodes"]
    assert len(nodes) == 3 and answer.data["total"] == 3
    for node in nodes:
        assert node["ready"] is True and node["pressures"] == []
        assert 0 < node["memory_used_of_allocatable"] < 1
        assert node["cpu_requested_of_allocatable"] is not None


def test_raw_query_and_range_query_pass_promql_through(settings: MetricsSettings) -> None:
    instant = call(settings, "query", promql='up{job="sandbox"}')
    assert not instant.error, instant.text
    assert instant.data["resultType"] == "vector"
    assert instant.data["result"][0]["value"][1] == "1"
    ranged = call(settings, "query_range", promql='up{job="sandbox"}', since="30s", step="5s")
    assert not ranged.error, ranged.text
    assert ranged.data["resultType"] == "matrix" and ranged.data["result"][0]["values"]


def test_raw_query_bounds_many_series(settings: MetricsSettings) -> None:
    answer = call(settings, "query", promql='{__name__=~"kube_.+"}')
    assert not answer.error, answer.text
    assert len(answer.data["result"]) == 200
    assert answer.data["series"] > 200 and "left out" in answer.data["note"]


@pytest.mark.parametrize(
    ("tool", "arguments", "complaint"),
    [
        ("query", {"promql": "sum(rate(up[5m]"}, "rejected the query"),
        ("golden_signals", {"service": 'web"} or vector(1) #', "namespace": NAMESPACE}, "service"),
        ("golden_signals", {"service": "web", "namespace": "shop;rm"}, "namespace"),
        ("golden_signals", {"service": "web", "namespace": NAMESPACE, "window": "5m]"}, "window"),
        ("golden_signals", {"service": "nothing", "namespace": NAMESPACE}, "no http_requests"),
        ("slo_burn_rate", {"service": "web", "namespace": NAMESPACE, "objective": 99.9}, "0 and 1"),
        ("query_range", {"promql": "up", "since": "30d", "step": "1s"}, "larger step"),
    ],
    ids=[
        "bad-promql",
        "injected-name",
        "injected-namespace",
        "bad-window",
        "unknown-service",
        "objective-not-fraction",
        "too-many-points",
    ],
)
def test_bad_arguments_are_refused_with_what_to_do(
    settings: MetricsSettings, tool: str, arguments: dict[str, object], complaint: str
) -> None:
    answer = call(settings, tool, **arguments)
    assert answer.error
    assert complaint in answer.text


def test_every_tool_is_annotated_read_only(settings: MetricsSettings) -> None:
    listed = tools(settings)
    assert {t.name for t in listed} >= {
        "query",
        "query_range",
        "golden_signals",
        "workload_utilization",
        "node_pressure",
        "slo_burn_rate",
        "sources",
    }
    for tool in listed:
        assert tool.annotations is not None
        assert tool.annotations.readOnlyHint is True, tool.name
        assert tool.annotations.destructiveHint is False, tool.name
        assert tool.annotations.idempotentHint is True, tool.name
