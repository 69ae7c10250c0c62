"""A real OTLP/HTTP trace receiver on loopback: the network seam of the crew's tracing.

    with receiving() as collector:
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": collector.url}
        ...
        collector.wait_for(lambda spans: any(s.name == "learn" for s in spans))

It accepts `POST /v1/traces` as a collector does (a protobuf `ExportTraceServiceRequest`,
gzip or not, decoded with `opentelemetry-proto`, the package the exporter itself builds on) and
keeps every span with its resource, so a test reads what reached the wire, nothing the SDK
holds in memory. Anything else is answered 404.
"""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue


@dataclass(frozen=True)
class ReceivedSpan:
    name: str
    trace_id: str
    span_id: str
    parent_id: str  # "" for a root span
    attributes: dict[str, Any]
    resource: dict[str, Any]
    status: int  # 0 unset, 1 ok, 2 error
    events: tuple[str, ...] = ()


@dataclass
class Collector:
    url: str
    spans: list[ReceivedSpan] = field(default_factory=list)
    requests: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def received(self) -> list[ReceivedSpan]:
        with self.lock:
            return list(self.spans)

    def wait_for(
        self, done: Callable[[list[ReceivedSpan]], bool], *, timeout: float = 15.0
    ) -> list[ReceivedSpan]:
        deadline = time.monotonic() + timeout
        while True:
            spans = self.received()
            if done(spans):
                return spans
            if time.monotonic() > deadline:
                names = sorted({s.name for s in spans})
                raise AssertionError(f"the collector did not get the spans wanted; it has {names}")
            time.sleep(0.05)


def value_of(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [value_of(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return attributes_of(value.kvlist_value.values)
    return getattr(value, kind) if kind else None


def attributes_of(pairs: Any) -> dict[str, Any]:
    return {pair.key: value_of(pair.value) for pair in pairs if isinstance(pair, KeyValue)}


def decode(body: bytes) -> list[ReceivedSpan]:
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    spans = []
    for resource_spans in request.resource_spans:
        resource = attributes_of(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                spans.append(
                    ReceivedSpan(
                        name=span.name,
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_id=span.parent_span_id.hex(),
                        attributes=attributes_of(span.attributes),
                        resource=resource,
                        status=span.status.code,
                        events=tuple(event.name for event in span.events),
                    )
                )
    return spans


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        if self.path.partition("?")[0] != "/v1/traces":
            self._reply(404, b"")
            return
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        spans = decode(body)
        collector = self.server.collector
        with collector.lock:
            collector.spans.extend(spans)
            collector.requests += 1
        self._reply(200, ExportTraceServiceResponse().SerializeToString())

    def _reply(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the test reads the spans, not the requests."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    collector: Collector


@contextmanager
def receiving() -> Iterator[Collector]:
    """An OTLP/HTTP receiver on a free loopback port for the block; `url` is its base URL."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.collector = Collector(f"http://127.0.0.1:{server.server_address[1]}")
    thread = threading.Thread(target=server.serve_forever, name="otlp-receiver", daemon=True)
    thread.start()
    try:
        yield server.collector
    finally:
        server.shutdown()
        server.server_close()
