"""`python -m benchmarks --suite telemetry`: what the crew's metrics and traces cost a heal.

1. The heal of the image typo (benchmarks/heal.py: injection to validated fix at a 10x clock),
   run alternately with tracing off and with tracing on, exporting every span over OTLP/HTTP to
   a receiver in a process of its own (decoding what it gets, as a collector does), 5 runs
   each in one sandbox after one heal not counted (the first pays for imports and sessions).
   Reported: the medians of the loop's wall time (detection to validated fix, the part the
   crew's code runs in) and their ratio, traced / plain. Metrics are always recorded, so both
   sides carry them; their own cost is part 2.
2. The metrics' and spans' own cost per operation: a `tool_call` block (counter, histogram, and
   the span when tracing is on) timed over 20,000 rounds, and the number of tool calls of one
   heal, so the cost per heal is their product.

The sandbox and its server process come from `benchmarks.__main__` (`start`).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from benchmarks import heal
from core.telemetry import REGISTRY, tool_call, tracing

RUNS = 5
ROUNDS = 20_000


def receive() -> None:
    """An OTLP/HTTP trace receiver: prints its port, decodes each export, and on stdin's end
    prints how many spans it got."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
        ExportTraceServiceResponse,
    )

    got = {"spans": 0}
    answer = ExportTraceServiceResponse().SerializeToString()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            request = ExportTraceServiceRequest()
            request.ParseFromString(self.rfile.read(int(self.headers["Content-Length"])))
            got["spans"] += sum(
                len(scope.spans) for rs in request.resource_spans for scope in rs.scope_spans
            )
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()
    print(got["spans"], flush=True)


@contextmanager
def receiver() -> Iterator[tuple[str, list[int]]]:
    """The receiver's base URL, and (once the block ends) the number of spans it got."""
    process = subprocess.Popen(
        [sys.executable, "-c", "from benchmarks.telemetry import receive; receive()"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdin is not None
    port = int(process.stdout.readline())
    spans: list[int] = []
    try:
        yield f"http://127.0.0.1:{port}", spans
    finally:
        process.stdin.close()
        spans.append(int(process.stdout.readline() or 0))
        process.wait(timeout=10)


def tool_calls() -> float:
    return sum(
        s.value
        for family in REGISTRY.collect()
        if family.name == "kubecrew_tool_calls"
        for s in family.samples
        if s.name.endswith("_total")
    )


async def bench_heal_traced(
    start: heal.Start, results: dict[str, Any], *, runs: int = RUNS
) -> None:
    plain: list[float] = []
    traced: list[float] = []
    calls: list[float] = []
    with receiver() as (url, spans):
        async with heal.heal_world(start) as world:
            heal._log("  a first heal, not counted (imports, first sessions) ...")
            await heal.heal_once(world, world.root / "home-warm-up")
            for run in range(runs):
                order = (False, True) if run % 2 == 0 else (True, False)  # no side always first
                for tracing_on in order:
                    side = "traced" if tracing_on else "plain"
                    heal._log(f"  heal run {run + 1}/{runs}, {side}")
                    environ = {"OTEL_EXPORTER_OTLP_ENDPOINT": url} if tracing_on else {}
                    on = tracing.configure("bench", environ)
                    before = tool_calls()
                    try:
                        measured = await heal.heal_once(world, world.root / f"home-{run}-{side}")
                    finally:
                        if on is not None:
                            on.flush()
                            on.shutdown()
                    calls.append(tool_calls() - before)
                    (traced if tracing_on else plain).append(measured["loop_wall_s"])
    results["telemetry: heal, tracing off vs on (OTLP/HTTP to a local receiver)"] = {
        "plain_loop_median_s": round(statistics.median(plain), 2),
        "traced_loop_median_s": round(statistics.median(traced), 2),
        "ratio_traced_to_plain": round(statistics.median(traced) / statistics.median(plain), 3),
        "plain_runs_s": [round(t, 2) for t in plain],
        "traced_runs_s": [round(t, 2) for t in traced],
        "tool_calls_per_heal": statistics.median(calls),
        "spans_received": spans[0] if spans else 0,
        "runs": runs,
    }


def bench_per_call(results: dict[str, Any], url: str, *, rounds: int = ROUNDS) -> dict[str, float]:
    def per_call() -> float:
        began = time.perf_counter()
        for n in range(rounds):
            with tool_call("kube", "bench", call_id=str(n), agent="bench"):
                pass
        return (time.perf_counter() - began) / rounds * 1e6

    def nothing() -> float:
        began = time.perf_counter()
        for _ in range(rounds):
            pass
        return (time.perf_counter() - began) / rounds * 1e6

    empty = nothing()
    metrics_only = per_call() - empty
    on = tracing.configure("bench", {"OTEL_EXPORTER_OTLP_ENDPOINT": url})
    assert on is not None
    try:
        with_spans = per_call() - empty
    finally:
        on.shutdown()
    cost = {"metrics_us": round(metrics_only, 2), "metrics_and_span_us": round(with_spans, 2)}
    results["telemetry: one tool call's own cost (metrics; metrics and a span)"] = cost | {
        "rounds": rounds
    }
    return cost


async def run(start: heal.Start, results: dict[str, Any], *, quick: bool = False) -> None:
    heal._log("the heal with tracing off and on ...")
    await bench_heal_traced(start, results, runs=2 if quick else RUNS)
    with receiver() as (url, _):
        cost = bench_per_call(results, url, rounds=2_000 if quick else ROUNDS)
    heal_result = results["telemetry: heal, tracing off vs on (OTLP/HTTP to a local receiver)"]
    calls = heal_result["tool_calls_per_heal"]
    loop_ms = heal_result["plain_loop_median_s"] * 1000
    per_heal_ms = calls * cost["metrics_and_span_us"] / 1000
    heal_result["telemetry_cpu_per_heal_ms"] = round(per_heal_ms, 2)
    heal_result["telemetry_cpu_share_of_loop"] = f"{per_heal_ms / loop_ms:.4%}"
