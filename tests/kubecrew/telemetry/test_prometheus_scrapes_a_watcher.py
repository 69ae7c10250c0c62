"""A real Prometheus scrapes a real part of the crew (tests/support/scraping.py): `kubecrew
watch` on a sandbox where web cannot pull its image, with a health port. The watcher's desk
opens the incident and the Dev Team diagnoses it through its tools; Prometheus, scraping the
part's `/metrics`, answers PromQL about both: the incident metric, and the tool calls with
their latency histogram."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

from sandbox.server import Sandbox
from tests.support.broken_web import image_typo
from tests.support.crew import start_kubecrew
from tests.support.diagnosis import NS
from tests.support.kubectl import Kubectl
from tests.support.mcp_hosts import free_port
from tests.support.scraping import scraping
from tests.support.waiting import eventually


def test_prometheus_reads_the_incidents_and_tool_calls_of_a_watch(
    sandbox: Sandbox, kubectl: Kubectl, tmp_path: Path
) -> None:
    kubectl("create", "namespace", NS)
    image_typo(kubectl)
    port = free_port()
    args = ["watch", "-n", NS, "--every", "1s", "--kubeconfig", str(sandbox.kubeconfig),
            "--health-port", str(port)]  # fmt: skip
    log = tmp_path / "watch.log"
    watch = start_kubecrew(args, tmp_path / "home", log)
    try:
        with scraping(f"127.0.0.1:{port}", tmp_path / "prometheus") as prometheus:

            def value(promql: str) -> float | None:
                assert watch.poll() is None, log.read_text()
                return prometheus.value(promql)

            handled = 'sum(kubecrew_incidents_handled_total{agent="dev_team",result="open"})'
            eventually(lambda: value(handled), timeout=60, what="the incident diagnosed")
            assert value("sum(kubecrew_incidents_opened_total)") == 1, log.read_text()
            diagnosed = 'kubecrew_tool_calls_total{server="kube",tool="diagnose",outcome="ok"}'
            assert (value(f"sum({diagnosed})") or 0) >= 2  # the patrol's, and the Dev Team's
            buckets = 'kubecrew_tool_call_duration_seconds_bucket{tool="diagnose"}'
            assert 0 < (value(f"histogram_quantile(1, sum by (le) ({buckets}))") or 0) <= 60
            assert value('up{job="kubecrew"}') == 1
    finally:
        watch.send_signal(signal.SIGINT)
        try:
            watch.wait(timeout=30)
        except subprocess.TimeoutExpired:
            watch.kill()
            watch.wait()
