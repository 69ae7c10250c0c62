"""Without Prometheus the metrics server answers from metrics.k8s.io, and says what it cannot.

The sandbox's kubelet serves metrics.k8s.io like metrics-server does; the server reaches it only
through the kubeconfig. One test runs the server as a host would: `python -m mcp_servers.metrics`
over stdio.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import TextContent

from mcp_servers.metrics.settings import MetricsSettings
from sandbox.server import Sandbox
from tests.mcp_servers.metrics.session import call
from tests.support.kubectl import Kubectl
from tests.support.waiting import eventually

pytestmark = pytest.mark.timeout(120)

MANIFESTS = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
      - name: api
        image: nginx:1.27
        resources:
          requests: {cpu: 50m, memory: 16Mi}
          limits: {cpu: 200m, memory: 64Mi}
"""


@pytest.fixture(scope="module")
def settings(
    shared_sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[MetricsSettings]:
    cache = tmp_path_factory.mktemp("fallback") / "kube-cache"
    Kubectl(shared_sandbox.kubeconfig, cache).run("apply", "-f", "-", input=MANIFESTS)
    yield MetricsSettings(kubeconfig=shared_sandbox.kubeconfig)


def test_utilization_comes_from_metrics_api_without_prometheus(settings: MetricsSettings) -> None:
    def measured() -> dict[str, object]:
        answer = call(settings, "workload_utilization", namespace="default")
        assert not answer.error, answer.text
        rows = {(r["kind"], r["name"]): r for r in answer.data["workloads"]}
        api = rows.get(("Deployment", "api"))
        assert api is not None, rows
        assert api["pods"] == 2 and api["memory_used"] > 0
        return {**api, "source": answer.data["source"], "note": answer.data["note"]}

    api = eventually(measured, timeout=60, what="api's pods measured by metrics.k8s.io")
    assert api["source"] == "metrics.k8s.io"
    assert "window is ignored" in str(api["note"])
    assert api["cpu_requests"] == pytest.approx(0.1)
    assert api["cpu_limits"] == pytest.approx(0.4)
    assert api["memory_requests"] == 2 * 16 * 2**20
    assert api["memory_peak_of_limits"] is not None
    # one sample: the busiest of the two pods now, at most what both use together
    assert 0 < api["cpu_peak"] <= api["cpu_used"]
    assert api["cpu_peak"] >= api["cpu_used"] / 2


def test_golden_signals_and_slo_say_they_need_prometheus(settings: MetricsSettings) -> None:
    for tool, arguments in (
        ("golden_signals", {"service": "api"}),
        ("slo_burn_rate", {"service": "api", "objective": 0.99}),
        ("query", {"promql": "up"}),
    ):
        answer = call(settings, tool, **arguments)
        assert answer.error, tool
        assert "unavailable" in answer.text and "--prometheus-url" in answer.text
    sources = call(settings, "sources").data
    assert sources["source"] == "metrics.k8s.io"
    assert "golden_signals" in sources["unavailable"]


def test_node_pressure_from_node_conditions_and_metrics_api(settings: MetricsSettings) -> None:
    def measured() -> list[dict[str, object]]:
        answer = call(settings, "node_pressure")
        assert not answer.error, answer.text
        nodes: list[dict[str, object]] = answer.data["nodes"]
        assert len(nodes) == 3
        assert all(n["memory_used_of_allocatable"] is not None for n in nodes)
        return nodes

    nodes = eventually(measured, timeout=60, what="node metrics")
    assert all(n["ready"] is True and n["pressures"] == [] for n in nodes)


def test_server_runs_over_stdio_as_a_host_starts_it(settings: MetricsSettings) -> None:
    assert settings.kubeconfig is not None
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_servers.metrics", "--kubeconfig", str(settings.kubeconfig)],
    )

    async def go() -> tuple[set[str], str]:
        async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            listed = {tool.name for tool in (await session.list_tools()).tools}
            result = await session.call_tool("sources", {})
            text = "".join(c.text for c in result.content if isinstance(c, TextContent))
            return listed, text

    listed, text = anyio.run(go)
    assert {"golden_signals", "workload_utilization", "node_pressure"} <= listed
    assert "metrics.k8s.io" in text


def test_unreachable_prometheus_is_reported_as_retryable(free_port_url: str) -> None:
    answer = call(
        MetricsSettings(prometheus_url=free_port_url, timeout=2),
        "golden_signals",
        service="api",
    )
    assert answer.error
    assert "did not answer" in answer.text and "retry" in answer.text


@pytest.fixture
def free_port_url() -> str:
    """A loopback URL nothing listens on."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"
