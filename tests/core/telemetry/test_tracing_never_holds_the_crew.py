"""Tracing costs nothing without a collector, and a collector that is down costs the crew one
line on stderr and a count, never its time (core.telemetry.tracing): spans are batched on the
SDK's thread, failed exports are counted in `kubecrew_trace_export_failures_total` and said once,
and the process exits within the shutdown budget, spans or not."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from core.telemetry import current_ids, span, tracing
from tests.support.mcp_hosts import free_port

ROOT = Path(__file__).resolve().parents[3]
# A part that makes spans while its collector is down, flushes twice (two failed exports), says
# how many failures it counted and how long its spans took, and exits.
PART = """
import time
from core.telemetry import REGISTRY, span, tracing
traced = tracing.configure("watch")
began = time.perf_counter()
for round in range(2):
    for n in range(500):
        with span("work", {"n": n}):
            pass
    traced.flush()
spent = time.perf_counter() - began
with span("left for the exit"):
    pass
print(REGISTRY.get_sample_value("kubecrew_trace_export_failures_total"), spent)
"""


def test_without_a_collector_nothing_is_set_up() -> None:
    assert tracing.configure("watch", {}) is None
    disabled = {"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}
    assert tracing.configure("watch", disabled) is None
    with span("work") as current:
        assert not current.is_recording()
        assert current_ids() is None


def test_a_collector_that_is_down_is_one_line_and_a_count(tmp_path: Path) -> None:
    down = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": down, "OTEL_EXPORTER_OTLP_TIMEOUT": "1",
           "PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}  # fmt: skip
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-c", PART], env=env, capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    took = time.monotonic() - began

    assert done.returncode == 0, done.stderr
    failures, spent = done.stdout.split()
    assert float(failures) == 2  # each flush's batch, counted
    assert float(spent) < 5  # 1,000 spans and two failed exports of 1 s at most
    [line] = done.stderr.splitlines()
    assert line.startswith(f"telemetry: spans could not be sent to {down}/v1/traces (")
    assert "the crew carries on without them" in line
    assert took < 15  # start, the work, and an exit that does not wait on the collector
